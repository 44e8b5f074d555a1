"""What one command keeps of each response file and metadata file it read, so that each is read
once per process.

Two readers need a little of every response file: the copy check compares each response of the
validated file with the response to the same question in every other submission (one fingerprint
per response), and the scorer needs each response's length and token counts. A run that validates
and then scores shares one :class:`DigestCache`, so each file is read once. Nothing is kept
between runs. The digests hold no response text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scoring.submissions import gaming
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import check_metadata
from scoring.submissions.report import ERROR, Limits
from scoring.submissions.responses import Response, read_response_file


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


def read_digest(path: Path, limits: Limits, *, fingerprints: bool) -> FileDigest:
    """Read one response file with the shared reader and digest it.

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
    """The digests of the response files and the metadata read by one command, by path.

    Args:
        limits: the size limits the files are read under.
    """

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
        """The digest of the response file at ``path``.

        ``fingerprints``: the digest must hold the copy check's fingerprints (a digest made
        without them is made again, with them).
        """
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
