"""Submission files (SPEC section 7): metadata and response lines."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, StringConstraints

SubmissionId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]{3,64}$")]
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class Production(BaseModel):
    """How the responses were produced."""

    model_config = ConfigDict(extra="forbid")

    decoding: NonEmpty = Field(description="Decoding settings, e.g. 'temperature 0, max 2048 tokens'.")
    tools: bool = Field(description="Whether the model could call tools.")
    web_access: bool = Field(description="Whether the model could search or browse the web.")
    system_prompt: str | None = Field(default=None, description="System prompt text or its hash.")
    notes: str | None = Field(default=None, max_length=2000)


class SubmissionMeta(BaseModel):
    """``submission.yaml``: who made the model and how the responses were produced."""

    model_config = ConfigDict(extra="forbid")

    model_name: NonEmpty
    organisation: NonEmpty
    model_family: NonEmpty = Field(description="For judge self-preference analysis, e.g. 'gpt'.")
    link: HttpUrl
    open_weights: bool
    parameters: NonEmpty | None = Field(default=None, description="e.g. '70B', or null if unknown.")
    date: dt.date
    contact: NonEmpty
    production: Production
    demo: bool = Field(default=False, description="True for the synthetic demo models only.")


class ResponseLine(BaseModel):
    """One line of ``multimodal.jsonl`` or ``text_only.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    response: str
