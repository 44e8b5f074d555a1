"""The compiled checks of a rubric set as arrays (ids and codes, never any text)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring import compiler
from scoring.compiler import CheckKind
from scoring.parameters import TIER_ORDER
from scoring.rubric import MetaRubric, Tier
from scoring.rubric_io import rubric_set_version

KIND_ORDER: tuple[CheckKind, ...] = tuple(CheckKind)


@dataclass(frozen=True)
class CheckTable:
    """The compiled checks of a rubric set, in rubric order: ids and codes, no text."""

    question_id: list[str]
    check_id: list[str]
    tier: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    secondary: npt.NDArray[np.bool_]
    rubric_version: str

    @classmethod
    def of(cls, compiled: dict[str, list[compiler.Check]], rubric_version: str) -> CheckTable:
        """From compiled checks keyed by question id."""
        rows = [(c.question_id, c.check_id, c.kind, c.tier, c.secondary) for cs in
                compiled.values() for c in cs]  # fmt: skip
        return cls._of(rows, rubric_version)

    @classmethod
    def _of(
        cls, rows: list[tuple[str, str, CheckKind, Tier, bool]], rubric_version: str
    ) -> CheckTable:
        tier = {t: i for i, t in enumerate(TIER_ORDER)}
        kind = {k: i for i, k in enumerate(KIND_ORDER)}
        return cls(
            [r[0] for r in rows],
            [r[1] for r in rows],
            np.array([tier[r[3]] for r in rows], np.int8),
            np.array([kind[r[2]] for r in rows], np.int8),
            np.array([r[4] for r in rows], np.bool_),
            rubric_version,
        )


def checks_of(rubrics: dict[str, MetaRubric]) -> CheckTable:
    """The :class:`CheckTable` of ``rubrics``: what compiling them gives, without making the
    check texts."""
    rows = [(q, *codes) for q, r in rubrics.items() for codes in compiler.check_codes(r)]
    return CheckTable._of(rows, rubric_set_version(rubrics))
