"""Submission files (docs/contract.md §7): metadata and response lines."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, StringConstraints

#: The submission id rule of docs/contract.md §7, plus: it starts with a letter or digit (no hidden
#: folders, no ``...``).
SUBMISSION_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{2,63}$"
SUBMISSION_ID_RE = re.compile(SUBMISSION_ID_PATTERN)
SUBMISSION_ID_RULE = (
    "3 to 64 characters: lowercase letters, digits, '-', '_' and '.', "
    "starting with a letter or digit"
)

SubmissionId = Annotated[str, StringConstraints(pattern=SUBMISSION_ID_PATTERN)]
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]

#: The files a submission folder may hold. ``multimodal.jsonl`` is required.
METADATA_FILE = "submission.yaml"
RESPONSE_FILES: dict[str, str] = {"multimodal": "multimodal.jsonl", "text_only": "text_only.jsonl"}
REQUIRED_FILES = (METADATA_FILE, RESPONSE_FILES["multimodal"])


# C0/C1 controls, soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width and
# bidirectional marks, embeddings, overrides and isolates, line/paragraph separators, invisible
# operators, the BOM, interlinear annotation marks, unpaired surrogates and tag characters.
_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f"
)
_UNSAFE_ONE_LINE = re.compile(f"[\t\n{_UNSAFE}]")
_UNSAFE_MULTILINE = re.compile(f"[{_UNSAFE}]")


def unsafe_char(text: str, multiline: bool = False) -> str | None:
    """Describe the first control, bidirectional or invisible character of ``text``, or None.

    Args:
        text: a metadata value.
        multiline: allow newline and tab (for free-text fields).
    """
    m = (_UNSAFE_MULTILINE if multiline else _UNSAFE_ONE_LINE).search(text)
    if m is None:
        return None
    code = ord(m.group())
    return f"the invisible or control character U+{code:04X} (character {m.start() + 1})"


def is_submission_id(name: str) -> bool:
    """Whether ``name`` follows the submission id rule."""
    return SUBMISSION_ID_RE.fullmatch(name) is not None


class Production(BaseModel):
    """How the responses were produced."""

    model_config = ConfigDict(extra="forbid")

    decoding: NonEmpty = Field(
        description="Decoding settings, e.g. 'temperature 0, max 2048 tokens'."
    )
    tools: bool = Field(description="Whether the model could call tools.")
    web_access: bool = Field(description="Whether the model could search or browse the web.")
    system_prompt: str | None = Field(default=None, description="System prompt text or its hash.")
    notes: str | None = Field(
        default=None,
        max_length=2000,
        description="Anything else a reader needs to reproduce the responses.",
    )


class SubmissionMeta(BaseModel):
    """``submission.yaml``: who made the model and how the responses were produced."""

    model_config = ConfigDict(extra="forbid")

    model_name: NonEmpty = Field(description="Name shown on the leaderboard, e.g. 'Acme-VL 2'.")
    organisation: NonEmpty = Field(description="Who built the model.")
    model_family: NonEmpty = Field(description="For judge self-preference analysis, e.g. 'gpt'.")
    link: HttpUrl = Field(description="Model card, paper or product page.")
    open_weights: bool = Field(description="Whether the weights are publicly downloadable.")
    parameters: NonEmpty | None = Field(default=None, description="e.g. '70B', or null if unknown.")
    date: dt.date = Field(description="When the responses were produced (YYYY-MM-DD).")
    contact: NonEmpty = Field(
        description="E-mail address or GitHub handle of a responsible person."
    )
    production: Production = Field(description="How the responses were produced.")
    demo: bool = Field(default=False, description="True for the synthetic demo models only.")


class ResponseLine(BaseModel):
    """One line of ``multimodal.jsonl`` or ``text_only.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    response: str
