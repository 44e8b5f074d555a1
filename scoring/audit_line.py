"""One line of a human audit label file (docs/contract.md §11): the model its reader and its
JSON Schema (``gamut schema``) share. Pydantic only, so that ``gamut schema`` loads no numpy."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from scoring.questions import Setting
from scoring.submissions.formats import SubmissionId
from scoring.verdicts import Verdict

AnnotatorId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]


class Role(StrEnum):
    """What a label line is: one annotator's verdict, or the adjudication of a disagreement."""

    LABEL = "label"
    ADJUDICATION = "adjudication"


class AuditLine(BaseModel):
    """One human verdict on one (response, check): ids, the verdict and an optional note; no
    check text (an unknown field is refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    submission_id: SubmissionId
    setting: Setting
    question_id: str = Field(min_length=1, max_length=128)
    check_id: str = Field(min_length=1, max_length=128)
    annotator: AnnotatorId = Field(description="The annotator's id (never a name or an e-mail).")
    verdict: Verdict
    role: Role
    note: str | None = Field(default=None, max_length=2000)
