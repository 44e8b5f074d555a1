"""What one command keeps of each response and metadata file it read, so each is read once.

The copy check needs a fingerprint of every response of every submission, the scorer each
response's length and token counts; a run that validates and then scores shares one
:class:`DigestCache`. Nothing is kept between runs, and no response text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoring.submissions import gaming
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import check_metadata
from scoring.submissions.report import ERROR, Limits
from scoring.submissions.responses import read_response_file


@dataclass(frozen=True)
class FileDigest:
    """What is kept of one response file: fingerprints (None when not asked for) and lengths by
    question id, whether it read clean, and ``usage`` (responses with tokens, input, output tokens).
    """

    fingerprints: dict[str, int] | None
    chars: dict[str, int]
    clean: bool
    usage: tuple[int, int, int] = (0, 0, 0)


def read_digest(path: Path, limits: Limits, *, fingerprints: bool) -> FileDigest:
    """Read one response file with the shared reader and digest it.

    ``fingerprints``: also fingerprint each response for the copy check.
    """
    read = read_response_file(path, "", "", None, limits)
    got = read.responses
    prints = {q: gaming.fingerprint(r.text) for q, r in got.items()} if fingerprints else None
    counted = [r.usage for r in got.values() if r.usage is not None]
    usage = len(counted), sum(u[0] for u in counted), sum(u[1] for u in counted)
    clean = not any(p.severity == ERROR for p in read.problems)
    return FileDigest(prints, {q: len(r.text) for q, r in got.items()}, clean, usage)


class DigestCache:
    """The digests of the response files and metadata read by one command, by path."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._files: dict[Path, FileDigest] = {}
        self._meta: dict[Path, SubmissionMeta | None] = {}

    @classmethod
    def open(cls, digests: DigestCache | None, limits: Limits) -> DigestCache:
        """``digests`` itself when it was read under ``limits`` (one run's validation and
        scoring share it), else a new one."""
        if digests is not None and digests.limits == limits:
            return digests
        return cls(limits)

    def of(self, path: Path, *, fingerprints: bool = False) -> FileDigest:
        """The digest of the response file at ``path`` (made again when ``fingerprints`` are wanted
        and it lacks them)."""
        found = self._files.get(path)
        if found is None or (fingerprints and found.fingerprints is None):
            found = self._files[path] = read_digest(path, self.limits, fingerprints=fingerprints)
        return found

    def metadata(self, path: Path) -> SubmissionMeta | None:
        """What :func:`~scoring.submissions.metadata.check_metadata` makes of the metadata file
        at ``path``: None when it gives no metadata (a caller that reports the problems runs the
        check itself)."""
        if path not in self._meta:
            self._meta[path] = check_metadata(path, "")[0]
        return self._meta[path]
