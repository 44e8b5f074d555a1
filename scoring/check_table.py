"""The compiled checks of a rubric set as arrays (ids and codes, never any text)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring import compiler
from scoring.compiler import CheckKind
from scoring.parameters import TIER_ORDER
from scoring.rubric import MetaRubric
from scoring.rubric_io import compile_all, rubric_set_version

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
        checks = [c for cs in compiled.values() for c in cs]
        tier = {t: i for i, t in enumerate(TIER_ORDER)}
        kind = {k: i for i, k in enumerate(KIND_ORDER)}
        return cls(
            [c.question_id for c in checks],
            [c.check_id for c in checks],
            np.array([tier[c.tier] for c in checks], np.int8),
            np.array([kind[c.kind] for c in checks], np.int8),
            np.array([c.secondary for c in checks], np.bool_),
            rubric_version,
        )


def checks_of(rubrics: dict[str, MetaRubric]) -> CheckTable:
    """Compile ``rubrics`` into a :class:`CheckTable`."""
    return CheckTable.of(compile_all(rubrics), rubric_set_version(rubrics))


__all__ = ["KIND_ORDER", "CheckTable", "checks_of"]
