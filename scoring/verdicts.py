"""The verdict row: the columnar hand-off from the judge to the scorer and to analysts."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from scoring.compiler import CheckKind
from scoring.questions import Setting
from scoring.rubric import Tier


class Verdict(StrEnum):
    """The judge's four verdicts. Their order is the integer code used in columnar tables."""

    MEETS = "meets"
    PARTIALLY_MEETS = "partially_meets"
    MISSING = "missing"
    CONTRADICTS = "contradicts"

    @property
    def code(self) -> int:
        """Stable integer code: meets 0, partially_meets 1, missing 2, contradicts 3."""
        return VERDICT_ORDER.index(self)


VERDICT_ORDER: tuple[Verdict, ...] = tuple(Verdict)

#: The verdict table's file name, inside the results folder.
VERDICT_TABLE = "verdicts.parquet"

#: Columns of every verdict table (``results/verdicts.parquet`` and exports), in order.
VERDICT_COLUMNS: tuple[str, ...] = (
    "submission_id",
    "setting",
    "judge",
    "question_id",
    "check_id",
    "kind",
    "tier",
    "secondary",
    "verdict",
)


#: Columns that carry rubric text or judge rationales: present only when rubrics are public.
VERDICT_TEXT_COLUMNS: tuple[str, ...] = ("rationale", "check_text")


class VerdictRow(BaseModel):
    """One judged (submission, setting, judge, question, check). ``rationale`` and ``check_text``
    appear only when rubrics are public."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    submission_id: str
    setting: Setting
    judge: str
    question_id: str
    check_id: str
    kind: CheckKind
    tier: Tier
    secondary: bool
    verdict: Verdict
    rationale: str | None = None
    check_text: str | None = None


#: Columns of the ``judge_drift`` table (written by the judge step when a judge's reported model
#: snapshot changes, read by the site's judges page).
DRIFT_COLUMNS: tuple[str, ...] = (
    "judge",
    "old_snapshot",
    "new_snapshot",
    "n_pairs",
    "agreement",
    "kappa",
    "old_score",
    "new_score",
    "score_diff",
)


__all__ = [
    "DRIFT_COLUMNS",
    "VERDICT_COLUMNS",
    "VERDICT_ORDER",
    "VERDICT_TABLE",
    "VERDICT_TEXT_COLUMNS",
    "Verdict",
    "VerdictRow",
]
