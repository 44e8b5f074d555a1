"""Human audit labels (docs/contract.md §11): the format, its reader and the final human verdict.

A label file is JSON Lines, one human verdict a line, no check text. :func:`read_audit` checks
each line against what is being scored, every problem at once; :meth:`AuditLabels.final` gives
the adjudication, else a strict majority's verdict, else none.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from scoring.audit_line import AuditLine, Role
from scoring.errors import Problem, ProblemsError
from scoring.jsonl import JsonlLimits, read_jsonl, validated
from scoring.questions import Setting
from scoring.verdicts import VERDICT_ORDER

Ints = npt.NDArray[np.int64]
#: The code of a (response, check) that has no final human verdict.
NO_VERDICT = -1
#: Settings in the order of the score tables' group index.
_SETTINGS: tuple[Setting, ...] = tuple(Setting)
#: Largest label file (a line is about 150 bytes: some 400,000 labels a file).
MAX_AUDIT_FILE_BYTES = 64 * 1024 * 1024
MAX_AUDIT_LINE_BYTES = 16 * 1024
_FORMAT = "write one label object per line (docs/contract.md §11 gives the label fields)"


@dataclass(frozen=True)
class AuditLabels:
    """Every valid label line, as ``[L]`` arrays.

    A response is ``submission * 2 + setting``; a check is its column among the expected checks;
    ``annotator`` indexes the sorted ``annotators``; ``ignored``: lines of unscored submissions.
    """

    annotators: tuple[str, ...]
    response: Ints
    check: Ints
    annotator: Ints
    verdict: npt.NDArray[np.int8]
    adjudication: npt.NDArray[np.bool_]
    n_responses: int
    n_checks: int
    files: tuple[str, ...] = ()
    ignored: int = 0

    @classmethod
    def empty(cls, n_responses: int, n_checks: int) -> AuditLabels:
        """No labels at all."""
        none = np.zeros(0, np.int64)
        return cls(
            (), none, none, none, np.zeros(0, np.int8), np.zeros(0, np.bool_), n_responses, n_checks
        )

    @property
    def size(self) -> int:
        """Number of label lines."""
        return int(self.response.size)

    def _cells(self) -> tuple[Ints, Ints]:
        cell = self.response * self.n_checks + self.check
        return np.unique(cell, return_inverse=True)

    def final(self) -> npt.NDArray[np.int8]:
        """``[n_responses, n_checks]`` final human verdict codes, :data:`NO_VERDICT` where none.

        The adjudication when there is one; else the verdict a strict majority of the cell's
        annotators gave (one annotator is a majority of one); else none (a disagreement that
        awaits adjudication).
        """
        out = np.full((self.n_responses, self.n_checks), NO_VERDICT, np.int8)
        if not self.size:
            return out
        cells, inverse = self._cells()
        n_v = len(VERDICT_ORDER)
        label = ~self.adjudication
        counts = np.bincount(
            inverse[label] * n_v + self.verdict[label], minlength=cells.size * n_v
        ).reshape(cells.size, n_v)
        top = counts.argmax(axis=1)
        majority = counts.max(axis=1) * 2 > counts.sum(axis=1)
        final = np.where(majority, top, NO_VERDICT).astype(np.int8)
        adj = np.flatnonzero(self.adjudication)
        final[inverse[adj]] = self.verdict[adj]  # at most one adjudication a cell (read_audit)
        out.reshape(-1)[cells] = final
        return out

    def annotator_pairs(self) -> tuple[Ints, npt.NDArray[np.int8], npt.NDArray[np.int8]]:
        """Every unordered pair of two annotators' labels on one (response, check).

        Returns:
            ``(cell, a, b)``: the pair's cell (``response * n_checks + check``) and the verdict
            codes of its annotators, the one with the lower annotator index first.
        """
        label = np.flatnonzero(~self.adjudication)
        order = label[
            np.lexsort((self.annotator[label], (self.response * self.n_checks + self.check)[label]))
        ]
        cell = (self.response * self.n_checks + self.check)[order]
        verdict = self.verdict[order]
        cells, a, b = [], [], []
        # the labels of one cell are next to each other: pair each with the one d places on
        d = 1
        while d < cell.size:
            same = np.flatnonzero(cell[d:] == cell[:-d])
            if not same.size:
                break
            cells.append(cell[same])
            a.append(verdict[same])
            b.append(verdict[same + d])
            d += 1
        if not cells:
            return np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int8)
        return (
            np.concatenate(cells).astype(np.int64),
            np.concatenate(a).astype(np.int8),
            np.concatenate(b).astype(np.int8),
        )


#: What is wrong with a label line: the message (``l``: the label; ``at``: the file and line of
#: the label it repeats) and the fix.
_WRONG = {
    "submission": (
        "unknown submission_id {l.submission_id!r}",
        "label only submissions that are in the submissions folder",
    ),
    "setting": (
        "submission {l.submission_id!r} has no {l.setting.value} responses",
        "fix the setting",
    ),
    "question": ("unknown question_id {l.question_id!r}", "use an id of the questions file"),
    "check": (
        "unknown check_id {l.check_id!r} for question {l.question_id}",
        "use a check id of the compiled rubric (`gamut rubric compile`)",
    ),
    "again": (
        "annotator {l.annotator!r} already gave a {l.role.value} for {l.submission_id} "
        "{l.setting.value} {l.question_id} {l.check_id} ({at})",
        "keep one line per annotator, response and check",
    ),
    "adjudicated": (
        "a second adjudication of {l.submission_id} {l.setting.value} {l.question_id} "
        "{l.check_id} ({at})",
        "keep one adjudication per response and check",
    ),
}


class _Places:
    """Where a label's ids point: its response (row) and its check (column)."""

    def __init__(
        self,
        submission_ids: Sequence[str],
        has_responses: npt.NDArray[np.bool_],
        question_ids: Sequence[str],
        check_ids: Sequence[Sequence[str]],
    ) -> None:
        self.subs = {s: i for i, s in enumerate(submission_ids)}
        self.questions = {q: i for i, q in enumerate(question_ids)}
        self.has_responses, self.check_ids = has_responses, check_ids
        self.starts = np.concatenate([[0], np.cumsum([len(c) for c in check_ids])]).astype(np.int64)
        self.columns: dict[int, dict[str, int]] = {}  # by question, made when first needed

    def __call__(self, label: AuditLine) -> tuple[int, int] | str:
        """``(response, check)`` of the label, or the key in :data:`_WRONG` of what is wrong."""
        s = self.subs.get(label.submission_id)
        if s is None:
            return "submission"
        k = _SETTINGS.index(label.setting)
        if not self.has_responses[s, k]:
            return "setting"
        q = self.questions.get(label.question_id)
        if q is None:
            return "question"
        cols = self.columns.get(q)
        if cols is None:
            first = int(self.starts[q])
            cols = self.columns[q] = {c: first + i for i, c in enumerate(self.check_ids[q])}
        c = cols.get(label.check_id)
        return "check" if c is None else (s * len(_SETTINGS) + k, c)


def read_audit(
    path: Path,
    *,
    submission_ids: Sequence[str],
    has_responses: npt.NDArray[np.bool_],
    question_ids: Sequence[str],
    check_ids: Sequence[Sequence[str]],
    known_submissions: Collection[str] = (),
) -> AuditLabels:
    """Read and check every label file of the audit folder ``path`` (or one ``.jsonl`` file).

    ``has_responses`` is ``[S, 2]``; ``check_ids`` are each question's, in expected-check order;
    lines of ``known_submissions`` that are not scored are counted in ``ignored``, not refused.

    Raises:
        ProblemsError: every problem of every file.
    """
    if not path.exists():
        fix = "create it or fix [benchmark] audit"
        problem = Problem(str(path), None, "audit folder not found", fix)
        raise ProblemsError([problem], "cannot read the audit labels")
    # the label files of the folder, or the one file named (a name holding no file is read, and
    # named by the reader)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    place = _Places(submission_ids, has_responses, question_ids, check_ids)
    unscored = set(known_submissions) - set(submission_ids)  # their lines are counted, not read
    problems: list[Problem] = []
    rows: list[tuple[int, int, str, int, bool]] = []
    first: dict[tuple[object, ...], str] = {}  # (response, check, annotator, role) / (r, c) -> at
    ignored = 0
    for f in files:
        name = str(f)
        read = read_jsonl(
            f,
            name,
            _FORMAT,
            JsonlLimits(MAX_AUDIT_FILE_BYTES, MAX_AUDIT_LINE_BYTES),
            blank_lines=False,
            what="an audit label file",
            size_fix="split the labels into more files",
            report=problems.append,
        )
        for n, label in validated(read.lines, AuditLine.model_validate, name, _FORMAT, problems):
            if label.submission_id in unscored:
                ignored += 1
                continue
            where, at = place(label), ""
            if not isinstance(where, str):
                r, c = where
                adj = label.role is Role.ADJUDICATION
                keys = (
                    [(r, c, label.annotator, adj), (r, c)]
                    if adj
                    else [(r, c, label.annotator, adj)]
                )
                clash = next((key for key in keys if key in first), None)
                if clash is None:
                    first.update(dict.fromkeys(keys, f"{name}:{n}"))
                    rows.append((r, c, label.annotator, label.verdict.code, adj))
                    continue
                where, at = ("again" if len(clash) == 4 else "adjudicated"), first[clash]
            message, fix = _WRONG[where]
            problems.append(Problem(name, n, message.format(l=label, at=at), fix))
    if problems:
        raise ProblemsError(
            problems, f"{len(problems)} problem(s) in the audit labels under {path}"
        )
    annotators = tuple(sorted({row[2] for row in rows}))
    a_index = {a: i for i, a in enumerate(annotators)}
    n = len(rows)
    return AuditLabels(
        annotators,
        np.fromiter((row[0] for row in rows), np.int64, n),
        np.fromiter((row[1] for row in rows), np.int64, n),
        np.fromiter((a_index[row[2]] for row in rows), np.int64, n),
        np.fromiter((row[3] for row in rows), np.int8, n),
        np.fromiter((row[4] for row in rows), np.bool_, n),
        len(submission_ids) * len(_SETTINGS),
        int(place.starts[-1]),
        tuple(str(f) for f in files),
        ignored,
    )
