"""The expected checks: the compiled checks (:mod:`scoring.check_table`) of every question, as
integer-coded arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.check_table import KIND_ORDER, CheckTable
from scoring.compiler import CheckKind
from scoring.errors import Problem, ProblemsError
from scoring.questions import Question

#: Number of (kind, secondary) codes of :attr:`CheckIndex.kind_key`.
N_KIND_KEYS = len(KIND_ORDER) * 2


@dataclass(frozen=True)
class CheckIndex:
    """Every expected check (every check of every question, by question then tier), as arrays."""

    question: npt.NDArray[np.int64]
    tier: npt.NDArray[np.int64]
    kind: npt.NDArray[np.int64]
    secondary: npt.NDArray[np.bool_]

    @property
    def size(self) -> int:
        """Number of expected checks per (submission, setting, judge)."""
        return int(self.question.size)

    @property
    def kind_key(self) -> npt.NDArray[np.int64]:
        """``[K]`` each check's (kind, secondary) code ``kind * 2 + secondary``: :func:`kind_of`."""
        return np.asarray(self.kind * 2 + self.secondary.astype(np.int64), np.int64)


def kind_of(key: int) -> tuple[CheckKind, bool]:
    """The (kind, secondary) of a :attr:`CheckIndex.kind_key` code."""
    return KIND_ORDER[key // 2], bool(key % 2)


def index_checks(
    questions: list[Question], table: CheckTable, where: str
) -> tuple[CheckIndex, list[list[str]]]:
    """The expected checks of ``questions`` and each question's check ids (ProblemsError: a
    question has no rubric)."""
    qindex = {q.question_id: i for i, q in enumerate(questions)}
    qpos = np.fromiter(
        (qindex.get(q, -1) for q in table.question_id), np.int64, len(table.question_id)
    )
    per_question = np.bincount(qpos[qpos >= 0], minlength=len(questions))
    lacking = [q.question_id for q, n in zip(questions, per_question, strict=True) if n == 0]
    if lacking:
        raise ProblemsError(
            [
                Problem(where, None, "no rubric for this question", "add its meta-rubric", qid)
                for qid in lacking
            ],
            f"{len(lacking)} question(s) have no rubric",
        )
    keep = np.flatnonzero(qpos >= 0)
    # question order, then tier order within a question, so per-(question, tier) sums are segments
    order = keep[np.lexsort((table.tier[keep], qpos[keep]))]
    ids = [table.check_id[i] for i in order]
    bounds = np.concatenate([[0], np.cumsum(per_question)])
    check_ids = [ids[bounds[i] : bounds[i + 1]] for i in range(len(questions))]
    index = CheckIndex(
        qpos[order],
        table.tier[order].astype(np.int64),
        table.kind[order].astype(np.int64),
        table.secondary[order],
    )
    return index, check_ids
