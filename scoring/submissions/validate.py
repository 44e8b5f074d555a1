"""``validate_submissions``: every rule of docs/contract.md §7 on one or more submission folders."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from scoring.errors import Problem
from scoring.questions import Question, Setting
from scoring.submissions import gaming
from scoring.submissions.digests import DigestCache
from scoring.submissions.formats import METADATA_FILE, RESPONSE_FILES
from scoring.submissions.layout import (
    all_targets,
    changed_targets,
    check_folder,
    display_path,
    first_in_history,
    targets_from_paths,
)
from scoring.submissions.metadata import check_metadata, field_line
from scoring.submissions.report import Limits, ValidationReport
from scoring.submissions.responses import read_response_file

_T = TypeVar("_T")


def _other(folder: Path, read: Callable[[], _T]) -> _T | None:
    """What ``read`` makes of a file of another submission's ``folder``: None when the folder is
    a link or the file cannot be read (a name that holds no regular file included), which that
    submission's own check names."""
    if folder.is_symlink():
        return None
    try:
        return read()
    except OSError:
        return None


class _Others:
    """Other submissions' fingerprints for the copy check, read lazily, once each."""

    def __init__(self, subs_root: Path, cache: DigestCache) -> None:
        self.subs_root = subs_root
        self.cache = cache
        self._by_file: dict[tuple[str, str], dict[str, int]] = {}

    def responses(self, sid: str, setting: str) -> dict[str, int]:
        """Fingerprints of the responses of ``sid`` in ``setting`` (empty if unreadable)."""
        key = (sid, setting)
        if key not in self._by_file:
            path = self.subs_root / sid / RESPONSE_FILES[setting]
            digest = _other(self.subs_root / sid, lambda: self.cache.of(path, fingerprints=True))
            prints = digest.fingerprints if digest is not None else None
            self._by_file[key] = prints if prints is not None else {}
        return self._by_file[key]


def display_key(name: str) -> str:
    """A display name compared the way readers see it: case, width and spacing ignored."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


class _Names:
    """Other submissions' display names (``model_name``), read lazily (through the digests),
    for the duplicate check."""

    def __init__(self, subs_root: Path, digests: DigestCache) -> None:
        self.subs_root = subs_root
        self.digests = digests
        self._cache: dict[str, str | None] = {}
        self._since: dict[str, int | None] = {}

    def key(self, sid: str) -> str | None:
        """The compared form of ``sid``'s model name, or None when its metadata is unreadable."""
        if sid not in self._cache:
            path = self.subs_root / sid / METADATA_FILE
            meta = _other(self.subs_root / sid, lambda: self.digests.metadata(path))
            self._cache[sid] = None if meta is None else display_key(meta.model_name)
        return self._cache[sid]

    def keeps(self, sid: str, other: str) -> bool:
        """Whether ``sid`` keeps the name it shares with ``other``: it entered git history
        first. Without history to tell (neither or both at once), neither keeps it."""
        for s in (sid, other):
            if s not in self._since:
                self._since[s] = first_in_history(self.subs_root, s)
        mine, theirs = self._since[sid], self._since[other]
        return mine is not None and (theirs is None or mine < theirs)

    def check(self, sid: str, path: Path, base: Path, peers: list[str]) -> list[Problem]:
        """The problems of ``sid``'s metadata file ``path``: its own, and a model name that one
        of the submissions ``peers`` keeps (see :meth:`keeps`)."""
        shown = display_path(path, base)
        # a file the check passed before (same bytes) has no problems: only a file with
        # problems is checked again, for them
        meta = _other(path.parent, partial(self.digests.metadata, path))
        problems: list[Problem] = []
        if meta is None:
            meta, problems = check_metadata(path, shown)
        if meta is None:
            return problems
        self._cache[sid] = display_key(meta.model_name)
        for other in peers:
            if self.key(other) == self._cache[sid] and not self.keeps(sid, other):
                taken = (
                    f"model_name {meta.model_name!r} is already the name of submission {other!r}"
                )
                fix = (
                    "choose a name that tells the two models apart (case and spacing are ignored "
                    "in this comparison; the submission committed first keeps the name)"
                )
                problems.append(Problem(shown, field_line(path, "model_name"), taken, fix))
        return problems


def _targets(
    subs_root: Path, paths: list[Path] | None, changed_from: str | None, base: Path
) -> tuple[list[str], list[Problem]]:
    """The submissions to validate (each once, in the order found) and the problems met finding
    them: those changed since ``changed_from``, those ``paths`` name, or (with neither, or the
    submissions folder among ``paths``) every one."""
    ids: list[str] = []
    problems: list[Problem] = []
    everything = paths is None and changed_from is None
    if changed_from is not None:
        found, wrong = changed_targets(subs_root, changed_from, base)
        ids, problems = ids + found, problems + wrong
    if paths:
        found, whole, wrong = targets_from_paths(subs_root, paths, base)
        ids, problems, everything = ids + found, problems + wrong, everything or whole
    if everything:
        found, wrong = all_targets(subs_root, base)
        ids, problems = ids + found, problems + wrong
    return list(dict.fromkeys(ids)), problems


def validate_submissions(
    subs_root: Path,
    questions: list[Question],
    paths: list[Path] | None = None,
    changed_from: str | None = None,
    *,
    base: Path,
    limits: Limits | None = None,
    digests: DigestCache | None = None,
    errors_only: bool = False,
) -> ValidationReport:
    """Validate submission folders against docs/contract.md §7, every problem at once.

    ``paths`` (folders or files in them; None or the submissions folder: every submission) or
    ``changed_from`` (a git ref: the changes since must touch one submission, which is validated)
    pick the submissions; messages show paths relative to ``base``. ``digests`` holds files this
    process read already (the copy check's fingerprints). ``errors_only`` skips the gaming warnings,
    and a response file whose digest reads clean and answers exactly the questions is not read
    again.
    """
    limits = limits or Limits()
    report = ValidationReport()
    if not subs_root.is_dir():
        fix = "create it, or check [benchmark] submissions in the config"
        shown = display_path(subs_root, base)
        report.problems.append(Problem(shown, None, "submissions folder not found", fix))
        return report
    report.submissions, report.problems = _targets(subs_root, paths, changed_from, base)
    entries = sorted(e.name for e in os.scandir(subs_root))
    folders = [e for e in entries if (subs_root / e).is_dir()]
    qids = [q.question_id for q in questions]
    qwords: dict[str, set[str]] | None = None  # the template check's, made when first needed
    others = _Others(subs_root, DigestCache.open(digests, limits))
    names = _Names(subs_root, others.cache)
    for sid in report.submissions:
        n_before = len(report.errors)
        folder = subs_root / sid
        files, problems = check_folder(folder, base, [e for e in entries if e != sid])
        report.problems += problems
        peers = [e for e in folders if e != sid]
        if METADATA_FILE in files:
            report.problems += names.check(sid, files[METADATA_FILE], base, peers)
        for setting in Setting:
            path = files.get(RESPONSE_FILES[setting.value])
            if path is None:
                continue
            if errors_only:
                digest = _other(folder, partial(others.cache.of, path))
                # clean and answering exactly the public questions: the reader would find no
                # error with the question ids either (they add only unknown and missing ids)
                if digest is not None and digest.clean and digest.chars.keys() == set(qids):
                    continue
            shown = display_path(path, base)
            read = read_response_file(path, shown, setting.value, qids, limits)
            report.problems += read.problems
            if errors_only or not read.responses:
                continue
            qwords = qwords or gaming.question_words(questions)
            theirs = {other: others.responses(other, setting.value) for other in peers}
            report.problems += gaming.warnings(shown, read.responses, qwords, theirs)
        if len(report.errors) > n_before:
            report.rejected.append(sid)
    return report
