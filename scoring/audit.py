"""Human audit labels (docs/contract.md §11): the format, its reader and the final human verdict.

A label file is JSON Lines, one human verdict a line: ``submission_id``, ``setting``,
``question_id``, ``check_id``, ``annotator``, ``verdict``, ``role`` (``label`` or
``adjudication``), optional ``note``; no check text. :func:`read_audit` reads every ``*.jsonl``
file of the audit folder with the project's one JSON Lines reader and checks each line against
the submissions, questions and checks being scored, every problem at once with ``file:line``.
The result, :class:`AuditLabels`, is integer arrays; :meth:`AuditLabels.final` applies the rule:
the adjudication if there is one, else the verdict a strict majority of the annotators gave, else
none.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from scoring.audit_line import AnnotatorId, AuditLine, Role
from scoring.errors import Problem, ProblemsError
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
_FORMAT = "docs/contract.md §11 gives the label fields"


@dataclass(frozen=True)
class AuditLabels:
    """Every valid label line, as arrays (one entry per line).

    A response ``r`` is ``submission * 2 + setting`` (the submission's index in the scored ids,
    the setting's in (multimodal, text_only)); a check is its column among the expected checks.

    Attributes:
        annotators: annotator ids, sorted (annotator index = position).
        response: ``[L]`` the response of each line.
        check: ``[L]`` the check of each line.
        annotator: ``[L]`` the annotator of each line.
        verdict: ``[L]`` verdict codes (meets 0 .. contradicts 3).
        adjudication: ``[L]`` whether the line is an adjudication.
        n_responses: number of responses (scored submissions x 2).
        n_checks: number of expected checks.
        files: the label files read, in order.
        ignored: lines of submissions that exist but are not being scored.
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


def audit_files(path: Path) -> list[Path]:
    """The label files of an audit folder (``*.jsonl``, sorted), or the one file named. A name
    that holds no regular file is listed too: reading it names it."""
    if not path.is_dir():
        return [path]
    return sorted(path.glob("*.jsonl"))


def read_audit(
    path: Path,
    *,
    submission_ids: Sequence[str],
    has_responses: npt.NDArray[np.bool_],
    question_ids: Sequence[str],
    check_ids: Sequence[Sequence[str]],
    known_submissions: Collection[str] = (),
) -> AuditLabels:
    """Read and check every label file of the audit folder ``path``.

    Args:
        path: the audit folder (or one ``.jsonl`` file).
        submission_ids: the submissions being scored, in the score tables' order.
        has_responses: ``[S, 2]`` whether each has a response file for each setting.
        question_ids: the questions, in order.
        check_ids: each question's check ids, in the order of the expected checks.
        known_submissions: other submissions that exist but are not scored in this run (their
            lines are counted in ``ignored``, not refused).

    Raises:
        ProblemsError: every problem of every file (unknown ids, a setting without responses,
            a second label by one annotator, a second adjudication, a bad verdict or field).
    """
    if not path.exists():
        raise ProblemsError(
            [
                Problem(
                    str(path), None, "audit folder not found", "create it or fix [benchmark] audit"
                )
            ],
            "cannot read the audit labels",
        )
    files = audit_files(path)
    return _read(path, files, submission_ids, has_responses, question_ids, check_ids,
                 known_submissions)  # fmt: skip


def _read(
    path: Path,
    files: list[Path],
    submission_ids: Sequence[str],
    has_responses: npt.NDArray[np.bool_],
    question_ids: Sequence[str],
    check_ids: Sequence[Sequence[str]],
    known_submissions: Collection[str],
) -> AuditLabels:
    from scoring.submissions.jsonl import JsonlLimits, read_jsonl

    sub_index = {s: i for i, s in enumerate(submission_ids)}
    q_index = {q: i for i, q in enumerate(question_ids)}
    starts = np.concatenate([[0], np.cumsum([len(c) for c in check_ids])]).astype(np.int64)
    n_checks = int(starts[-1])
    check_maps: dict[int, dict[str, int]] = {}
    problems: list[Problem] = []
    rows: list[tuple[int, int, str, int, bool]] = []
    seen: dict[tuple[int, int, str, bool], tuple[str, int]] = {}
    adjudicated: dict[tuple[int, int], tuple[str, int]] = {}
    ignored = 0
    for f in files:
        name = str(f)
        read = read_jsonl(
            f,
            name,
            "write one label object per line",
            JsonlLimits(MAX_AUDIT_FILE_BYTES, MAX_AUDIT_LINE_BYTES),
            blank_lines=False,
            what="an audit label file",
            size_fix="split the labels into more files",
        )
        problems += read.problems
        for line in read.lines:
            n = line.line
            try:
                label = AuditLine.model_validate(line.value)
            except ValidationError as exc:
                problems += Problem.of_validation(exc, name, n, _FORMAT)
                continue
            s = sub_index.get(label.submission_id)
            if s is None:
                if label.submission_id in known_submissions:
                    ignored += 1
                else:
                    problems.append(
                        Problem(
                            name,
                            n,
                            f"unknown submission_id {label.submission_id!r}",
                            "label only submissions that are in the submissions folder",
                        )
                    )
                continue
            k = _SETTINGS.index(label.setting)
            if not has_responses[s, k]:
                problems.append(
                    Problem(
                        name,
                        n,
                        f"submission {label.submission_id!r} has no "
                        f"{label.setting.value} responses",
                        "fix the setting",
                    )
                )
                continue
            q = q_index.get(label.question_id)
            if q is None:
                problems.append(
                    Problem(
                        name,
                        n,
                        f"unknown question_id {label.question_id!r}",
                        "use an id of the questions file",
                    )
                )
                continue
            cmap = check_maps.get(q)
            if cmap is None:
                cmap = check_maps[q] = {c: int(starts[q]) + i for i, c in enumerate(check_ids[q])}
            c = cmap.get(label.check_id)
            if c is None:
                problems.append(
                    Problem(
                        name,
                        n,
                        f"unknown check_id {label.check_id!r} for question {label.question_id}",
                        "use a check id of the compiled rubric (`gamut rubric compile`)",
                    )
                )
                continue
            r = s * len(_SETTINGS) + k
            adj = label.role is Role.ADJUDICATION
            key = (r, c, label.annotator, adj)
            if key in seen:
                first = seen[key]
                problems.append(
                    Problem(
                        name,
                        n,
                        f"annotator {label.annotator!r} already gave a {label.role.value} for "
                        f"{label.submission_id} {label.setting.value} {label.question_id} "
                        f"{label.check_id} ({first[0]}:{first[1]})",
                        "keep one line per annotator, response and check",
                    )
                )
                continue
            seen[key] = (name, n)
            if adj:
                if (r, c) in adjudicated:
                    first = adjudicated[(r, c)]
                    problems.append(
                        Problem(
                            name,
                            n,
                            f"a second adjudication of {label.submission_id} "
                            f"{label.setting.value} {label.question_id} {label.check_id} "
                            f"({first[0]}:{first[1]})",
                            "keep one adjudication per response and check",
                        )
                    )
                    continue
                adjudicated[(r, c)] = (name, n)
            rows.append((r, c, label.annotator, label.verdict.code, adj))
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
        n_checks,
        tuple(str(f) for f in files),
        ignored,
    )


__all__ = [
    "MAX_AUDIT_FILE_BYTES",
    "NO_VERDICT",
    "AnnotatorId",
    "AuditLabels",
    "AuditLine",
    "Role",
    "audit_files",
    "read_audit",
]
