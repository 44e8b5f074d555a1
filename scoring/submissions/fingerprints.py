"""Fingerprints of other submissions' responses for the copy check, cached by content hash.

The copy check compares each response of the validated file with the response to the same question
in every other submission. Reading and normalising those other files is most of a validation's
time, and they rarely change between two validations, so their fingerprints are kept in one JSON
file in the store, keyed by the SHA-256 of each response file's bytes. An entry that is missing,
malformed or from another version of the fingerprint is computed again; the file is rewritten
(atomically) only when an entry was added or dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scoring.storage import atomic_write_text

#: Changes whenever :func:`scoring.submissions.gaming.fingerprint`, ``normalise`` or what the
#: response reader keeps of a file changes: entries of another version are never used.
VERSION = 1
#: A cache file larger than this is ignored (and rebuilt): about 500 files of 2,000 responses.
MAX_CACHE_BYTES = 64 * 1024 * 1024
_FORMAT = "gamut-submission-fingerprints"
_CHUNK = 1024 * 1024


def content_hash(path: Path, limit: int) -> str | None:
    """The SHA-256 of the file's bytes (hex), or None when it holds more than ``limit`` bytes.

    Never reads more than ``limit + 1`` bytes.
    """
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while chunk := f.read(min(_CHUNK, limit + 1 - size)):
            size += len(chunk)
            if size > limit:
                return None
            digest.update(chunk)
    return digest.hexdigest()


def _entry(value: Any) -> dict[str, int] | None:
    """A cached entry as question id -> fingerprint, or None when it is malformed."""
    if not isinstance(value, dict):
        return None
    ids, prints = value.get("ids"), value.get("fingerprints")
    if not (isinstance(ids, list) and isinstance(prints, str) and len(prints) == 16 * len(ids)):
        return None
    if not all(isinstance(q, str) for q in ids) or len(set(ids)) != len(ids):
        return None
    try:
        raw = bytes.fromhex(prints)
    except ValueError:
        return None
    return {q: int.from_bytes(raw[8 * i : 8 * i + 8], "big") for i, q in enumerate(ids)}


def _encode(fingerprints: dict[str, int]) -> dict[str, Any]:
    ids = list(fingerprints)
    raw = b"".join(fingerprints[q].to_bytes(8, "big") for q in ids)
    return {"ids": ids, "fingerprints": raw.hex()}


class FingerprintCache:
    """Fingerprints by content hash, read from and written back to one file.

    Args:
        path: the cache file (None: keep nothing between runs).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._raw: dict[str, Any] = self._read() if path is not None else {}
        self._used: dict[str, dict[str, int]] = {}
        self._changed = False

    def _read(self) -> dict[str, Any]:
        """The entries of the cache file, unchecked; empty when it is absent or unusable."""
        assert self.path is not None
        try:
            if self.path.stat().st_size > MAX_CACHE_BYTES:
                return {}
            doc = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (ValueError, RecursionError):
            # a corrupt cache (not UTF-8, not JSON, nested too deep) is rebuilt, never trusted
            return {}
        if not (
            isinstance(doc, dict)
            and doc.get("format") == _FORMAT
            and doc.get("version") == VERSION
            and isinstance(doc.get("files"), dict)
        ):
            return {}
        files: dict[str, Any] = doc["files"]
        return files

    def get(self, digest: str, compute: Callable[[], dict[str, int]]) -> dict[str, int]:
        """The fingerprints of the file whose content hash is ``digest``.

        Args:
            digest: from :func:`content_hash`.
            compute: reads the file and returns question id -> fingerprint, on a miss.
        """
        if digest in self._used:
            return self._used[digest]
        found = _entry(self._raw.get(digest))
        if found is None:
            found = compute()
            self._changed = True
        self._used[digest] = found
        return found

    def save(self, *, prune: bool) -> None:
        """Write the cache file when something changed.

        Args:
            prune: drop the entries not used since this cache was read (pass True only when every
                current response file was looked up, so that nothing still needed is lost).
        """
        if self.path is None:
            return
        kept = {d: _encode(f) for d, f in self._used.items()}
        if not prune:
            # entries not used this time stay as they were (a later run checks them)
            kept = {**{d: v for d, v in self._raw.items() if d not in kept}, **kept}
        if not self._changed and kept.keys() == self._raw.keys():
            return
        doc = {"format": _FORMAT, "version": VERSION, "files": kept}
        atomic_write_text(self.path, json.dumps(doc, separators=(",", ":")))


__all__ = ["MAX_CACHE_BYTES", "VERSION", "FingerprintCache", "content_hash"]
