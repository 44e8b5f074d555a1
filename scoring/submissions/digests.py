"""What the pipeline keeps of each response file between runs, cached by content hash.

Two readers need a little of every response file, every run: the copy check compares each response
of the validated file with the response to the same question in every other submission (one
fingerprint per response), and the scorer needs each response's length. Reading and checking the
files line by line is most of a validation's time and half a warm score's, and the files rarely
change between two runs, so one digest per file is kept in one JSON file in the store, keyed by the
SHA-256 of the file's bytes and the size limits it was read under:

- ``ids``: the question ids of the responses, in file order;
- ``fingerprints``: the copy check's fingerprint of each response (8 bytes each, hex), once a
  copy check has asked for them (an entry made for the scorer, or for a validation that finds
  errors only, does without: normalising every response is half the time of a first read);
- ``chars``: each response's length in characters;
- ``usage``: how many responses record the provider's token counts (the line's optional
  ``usage``) and their input and output tokens summed;
- ``clean``: whether the reader found no error in the file (a reader that must reject a bad file
  reads it again for the problems; a digest never stands in for them).

The metadata files (``submission.yaml``) are kept the same way: what the metadata check makes of
each file, by the SHA-256 of its bytes, so that the other submissions' model names (the duplicate
name check) and the scorer's metadata are not parsed again.

An entry that is missing, malformed or from another version is computed again; the file is
rewritten (atomically) only when an entry was added or dropped. The digests hold no response text.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scoring.storage import atomic_write_text
from scoring.submissions import gaming
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import MAX_METADATA_BYTES, check_metadata
from scoring.submissions.report import ERROR, Limits
from scoring.submissions.responses import Response, content_hash, read_response_file

#: Changes whenever :func:`scoring.submissions.gaming.fingerprint`, ``normalise``, what the
#: response reader keeps of a file, what the metadata check accepts or what a digest holds
#: changes: entries of another version are never used.
VERSION = 7
#: A cache file larger than this is ignored (and rebuilt): about 500 files of 2,000 responses.
MAX_CACHE_BYTES = 64 * 1024 * 1024
_FORMAT = "gamut-response-digests"
_ABSENT = object()


@dataclass(frozen=True)
class FileDigest:
    """What is kept of one response file.

    Attributes:
        fingerprints: question id -> the copy check's fingerprint of the response; None when
            they were not asked for.
        chars: question id -> the response's length in characters.
        clean: the reader found no error in the file.
        usage: (responses recording their tokens, their input tokens, their output tokens).
    """

    fingerprints: dict[str, int] | None
    chars: dict[str, int]
    clean: bool
    usage: tuple[int, int, int] = (0, 0, 0)


def _entry(value: Any) -> FileDigest | None:
    """A cached entry, or None when it is malformed."""
    if not isinstance(value, dict):
        return None
    ids, prints, chars, clean, usage = (
        value.get(k) for k in ("ids", "fingerprints", "chars", "clean", "usage")
    )
    if not isinstance(ids, list):
        return None
    if prints is not None and not (isinstance(prints, str) and len(prints) == 16 * len(ids)):
        return None
    # set(map(type, ...)): one pass in C over the thousands of values of an entry
    if not set(map(type, ids)) <= {str} or len(set(ids)) != len(ids):
        return None
    if not (isinstance(chars, list) and len(chars) == len(ids) and isinstance(clean, bool)):
        return None
    if not set(map(type, chars)) <= {int} or min(chars, default=0) < 0:
        return None
    if not (
        isinstance(usage, list)
        and len(usage) == 3
        and set(map(type, usage)) <= {int}
        and min(usage) >= 0
    ):
        return None
    fingerprints = None
    if prints is not None:
        try:
            raw = bytes.fromhex(prints)
        except ValueError:
            return None
        prints_of = struct.unpack(f">{len(ids)}Q", raw)  # 8 bytes each, big-endian
        fingerprints = dict(zip(ids, prints_of, strict=True))
    n_usage, tokens_in, tokens_out = usage
    return FileDigest(
        fingerprints, dict(zip(ids, chars, strict=True)), clean, (n_usage, tokens_in, tokens_out)
    )


def _encode(digest: FileDigest) -> dict[str, Any]:
    ids = list(digest.chars)
    out: dict[str, Any] = {"ids": ids, "chars": list(digest.chars.values())}
    if digest.fingerprints is not None:
        prints = digest.fingerprints
        out["fingerprints"] = b"".join(prints[q].to_bytes(8, "big") for q in ids).hex()
    out["clean"] = digest.clean
    out["usage"] = list(digest.usage)
    return out


def read_digest(path: Path, limits: Limits, *, fingerprints: bool) -> FileDigest:
    """Read one response file with the shared reader and digest it (no cache).

    ``fingerprints``: also fingerprint each response for the copy check.
    """
    read = read_response_file(path, "", "", None, limits)
    return FileDigest(
        {q: gaming.fingerprint(r.text) for q, r in read.responses.items()}
        if fingerprints
        else None,
        {q: len(r.text) for q, r in read.responses.items()},
        not any(p.severity == ERROR for p in read.problems),
        usage_totals(read.responses.values()),
    )


def usage_totals(responses: Iterable[Response]) -> tuple[int, int, int]:
    """(responses that record their tokens, their input tokens, their output tokens)."""
    counted = [r.usage for r in responses if r.usage is not None]
    return len(counted), sum(u[0] for u in counted), sum(u[1] for u in counted)


class DigestCache:
    """Digests of response files by content hash, read from and written back to one file.

    Args:
        path: the cache file (None: keep nothing between runs).
        limits: the size limits the files are read under (part of each entry's key).
    """

    def __init__(self, path: Path | None, limits: Limits) -> None:
        self.path = path
        self.limits = limits
        self._tag = f"{limits.max_response_bytes}:{limits.max_file_bytes}"
        doc = self._read() if path is not None else {}
        self._raw: dict[str, Any] = doc.get("files", {})
        self._used: dict[str, FileDigest] = {}
        self._meta_raw: dict[str, Any] = doc.get("metadata", {})
        self._meta_used: dict[str, SubmissionMeta | None] = {}
        self._changed = False
        self._hashes: dict[tuple[str, int, int, int, int, int], str | None] = {}
        # the entries looked up since the file was read or last saved (what a pruning save keeps)
        self._seen: set[str] = set()
        self._meta_seen: set[str] = set()

    @classmethod
    def open(cls, digests: Path | DigestCache | None, limits: Limits) -> DigestCache:
        """``digests`` itself when it is a cache read under ``limits`` (one run's validation and
        scoring share it, so each file is hashed once), else the cache of that file."""
        if isinstance(digests, DigestCache):
            if digests.limits == limits:
                return digests
            return cls(digests.path, limits)
        return cls(digests, limits)

    def _content_hash(self, path: Path, limit: int) -> str | None:
        """:func:`content_hash`, not computed again for a file this cache hashed before whose
        size, inode and change times are still the same."""
        st = path.stat()
        seen = (str(path), limit, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        if seen not in self._hashes:
            self._hashes[seen] = content_hash(path, limit)
        return self._hashes[seen]

    def _read(self) -> dict[str, Any]:
        """The cache file's sections (``files``, ``metadata``), their entries unchecked; empty
        when it is absent or unusable."""
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
            and isinstance(doc.get("metadata"), dict)
        ):
            return {}
        return {"files": doc["files"], "metadata": doc["metadata"]}

    def of(self, path: Path, *, fingerprints: bool = False) -> FileDigest | None:
        """The digest of the response file at ``path``; None when it is larger than the limit
        (such a file is rejected unread).

        ``fingerprints``: the digest must hold the copy check's fingerprints (an entry made
        without them is made again, with them).
        """
        digest = self._content_hash(path, self.limits.max_file_bytes)
        if digest is None:
            return None
        key = f"{digest}:{self._tag}"
        found = self._used.get(key) or _entry(self._raw.get(key))
        if found is None or (fingerprints and found.fingerprints is None):
            found = read_digest(path, self.limits, fingerprints=fingerprints)
            self._changed = True
        self._used[key] = found
        self._seen.add(key)
        return found

    def metadata(self, path: Path) -> SubmissionMeta | None:
        """What :func:`~scoring.submissions.metadata.check_metadata` makes of the metadata file
        at ``path``, by content: None when it gives no metadata (a caller that reports the
        problems runs the check itself)."""
        digest = self._content_hash(path, MAX_METADATA_BYTES)
        if digest is None:
            return None  # over the size limit: the check refuses it unread
        if digest not in self._meta_used:
            found: SubmissionMeta | None
            entry = self._meta_raw.get(digest, _ABSENT)
            try:
                found = None if entry is None else SubmissionMeta.model_validate(entry)
            except ValidationError:
                entry = _ABSENT  # a malformed entry is computed again
            if entry is _ABSENT:
                found = check_metadata(path, "")[0]
                self._changed = True
            self._meta_used[digest] = found
        self._meta_seen.add(digest)
        return self._meta_used[digest]

    def save(self, *, prune: bool) -> None:
        """Write the cache file when something changed.

        Args:
            prune: drop the entries not looked up since this cache was read or last saved (pass
                True only when every current response file was looked up, so that nothing still
                needed is lost).
        """
        if self.path is None:
            return
        if not self._changed and (
            not prune
            or (self._seen == self._raw.keys() and self._meta_seen == self._meta_raw.keys())
        ):
            return  # every entry used came from the file, and none is dropped
        if prune:
            kept = {k: _encode(self._used[k]) for k in self._seen}
            meta = {k: _dump(self._meta_used[k]) for k in self._meta_seen}
        else:
            # entries not used this time stay as they were (a later run checks them)
            kept = {**self._raw, **{k: _encode(self._used[k]) for k in self._seen}}
            meta = {**self._meta_raw, **{k: _dump(self._meta_used[k]) for k in self._meta_seen}}
        doc = {"format": _FORMAT, "version": VERSION, "files": kept, "metadata": meta}
        atomic_write_text(self.path, json.dumps(doc, separators=(",", ":")))
        # what the file holds now: a later save of this cache starts from it
        self._raw, self._meta_raw, self._changed = kept, meta, False
        self._seen, self._meta_seen = set(), set()


def _dump(meta: SubmissionMeta | None) -> Any:
    return None if meta is None else meta.model_dump(mode="json")


__all__ = [
    "MAX_CACHE_BYTES",
    "VERSION",
    "DigestCache",
    "FileDigest",
    "content_hash",
    "read_digest",
]
