"""The verdict row: the columnar hand-off from the judge to the scorer and to analysts."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

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
#: The usage table's file name, beside it (:mod:`scoring.judge.usage`): an input of the score
#: tables, like the verdict table, not a published table.
USAGE_TABLE = "judge_usage.parquet"
#: Parquet metadata key of the digest of everything a verdict table (and the usage table beside
#: it) was built from (:func:`scoring.judge.table.table_fingerprint`).
FINGERPRINT = b"gamut.fingerprint"
STAMPS = b"gamut.stamps"  #: Parquet metadata key of what judged a verdict table's rows

#: The (response, check) a verdict is about: a submission's response in a setting to a question,
#: and one check of that question (``check_id`` is unique only within its question).
PAIR_KEY: tuple[str, ...] = ("submission_id", "setting", "question_id", "check_id")
#: The columns that identify one verdict row: the pair and the judge.
VERDICT_KEY: tuple[str, ...] = ("submission_id", "setting", "judge", "question_id", "check_id")


class VerdictRow(BaseModel):
    """One row of every verdict table (results, ``gamut export verdicts`` and the published one):
    its fields in column order, the required ones in every table; ``rationale`` and ``check_text``
    only when rubrics are public. ``gamut schema`` writes its JSON Schema."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    submission_id: str
    setting: Setting
    judge: str
    judge_id: str | None = Field(
        default=None,
        description="The judge's identity, provider:model@prompt-version (exports and the "
        "published table only).",
    )
    question_id: str
    domain: str | None = Field(
        default=None, description="The question's domain (the published table only)."
    )
    check_id: str = Field(description="Unique only within its question.")
    kind: CheckKind
    tier: Tier
    secondary: bool
    verdict: Verdict
    rationale: str | None = Field(default=None, description="Public rubrics only.")
    check_text: str | None = Field(default=None, description="Public rubrics only.")


#: Every column a verdict table may have, in the order they are written.
VERDICT_ROW_COLUMNS: tuple[str, ...] = tuple(VerdictRow.model_fields)

#: Columns of every verdict table (``results/verdicts.parquet`` and exports), in order.
VERDICT_COLUMNS: tuple[str, ...] = tuple(
    name for name, f in VerdictRow.model_fields.items() if f.is_required()
)

#: Columns that carry rubric text or judge rationales: present only when rubrics are public.
VERDICT_TEXT_COLUMNS: tuple[str, ...] = ("rationale", "check_text")


def verdict_column_order(columns: Iterable[str]) -> list[str]:
    """``columns`` in the order of :class:`VerdictRow`.

    Raises:
        ValueError: a column that is not a field of :class:`VerdictRow`.
    """
    given = set(columns)
    unknown = sorted(given - set(VERDICT_ROW_COLUMNS))
    if unknown:
        raise ValueError(f"not verdict row columns: {', '.join(unknown)}")
    return [c for c in VERDICT_ROW_COLUMNS if c in given]


__all__ = ["VERDICT_COLUMNS", "VERDICT_ORDER", "VERDICT_TEXT_COLUMNS"]  # the site may use
