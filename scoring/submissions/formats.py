"""Submission files (docs/contract.md §7): metadata and response lines."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    HttpUrl,
    StrictBool,
    StrictInt,
    StringConstraints,
)

#: The submission id rule of docs/contract.md §7, plus: it starts with a letter or digit (no hidden
#: folders, no ``...``).
SUBMISSION_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{2,63}$"
SUBMISSION_ID_RE = re.compile(SUBMISSION_ID_PATTERN)
SUBMISSION_ID_RULE = (
    "3 to 64 characters: lowercase letters, digits, '-', '_' and '.', "
    "starting with a letter or digit"
)

SubmissionId = Annotated[str, StringConstraints(pattern=SUBMISSION_ID_PATTERN)]

#: The files a submission folder may hold. ``multimodal.jsonl`` is required.
METADATA_FILE = "submission.yaml"
RESPONSE_FILES: dict[str, str] = {"multimodal": "multimodal.jsonl", "text_only": "text_only.jsonl"}
REQUIRED_FILES = (METADATA_FILE, RESPONSE_FILES["multimodal"])


# C0/C1 controls, soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width and
# bidirectional marks, embeddings, overrides and isolates, line/paragraph separators, invisible
# operators, the BOM, interlinear annotation marks, unpaired surrogates and tag characters.
_UNSAFE_HEX = (
    "0-8 B-1F 7F-9F AD 61C 180E 200B-200F 2028-202E 2060-2064 2066-206F FEFF FFF9-FFFB D800-DFFF "
    "E0000-E007F"
)
_UNSAFE_RANGES = [
    (int(a, 16), int(b or a, 16)) for a, _, b in (r.partition("-") for r in _UNSAFE_HEX.split())
]
_UNSAFE = "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in _UNSAFE_RANGES)
#: The same characters written with ``\\uXXXX`` escapes, which JSON Schema's regular
#: expressions (ECMA-262) and Python's read alike; without the unpaired surrogates and the tag
#: characters (an ECMA-262 pattern without the ``u`` flag cannot name a character beyond U+FFFF,
#: nor a surrogate without splitting every emoji): the schemas say so, the validator refuses them.
_UNSAFE_ESCAPED = "".join(
    f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}"
    for a, b in _UNSAFE_RANGES
    if b < 0xD800 or 0xDFFF < a <= 0xFFFF
)
_UNSAFE_ONE_LINE = re.compile(f"[\t\n{_UNSAFE}]")
_UNSAFE_MULTILINE = re.compile(f"[{_UNSAFE}]")


def unsafe_char(text: str, multiline: bool = False) -> str | None:
    """Describe the first control, bidirectional or invisible character of ``text`` (``multiline``
    allows newline and tab), or None."""
    m = (_UNSAFE_MULTILINE if multiline else _UNSAFE_ONE_LINE).search(text)
    if m is None:
        return None
    code = ord(m.group())
    return f"the invisible or control character U+{code:04X} (character {m.start() + 1})"


#: The JSON Schema patterns of the metadata's text, from the same characters as
#: :func:`unsafe_char`: a one-line value has no tab, newline or unsafe character and is not
#: blank; a free-text value may hold newlines and tabs.
ONE_LINE_PATTERN = (
    f"^[^\\t\\n{_UNSAFE_ESCAPED}]*[^\\s{_UNSAFE_ESCAPED}][^\\t\\n{_UNSAFE_ESCAPED}]*$"
)
MULTILINE_PATTERN = f"^[^{_UNSAFE_ESCAPED}]*$"
#: Links: http(s) only, a host, no space or unsafe character (then a valid URL, which a pattern
#: cannot say: the validator also parses it).
LINK_PATTERN = f"^https?://[^\\s/?#{_UNSAFE_ESCAPED}]+[^\\s{_UNSAFE_ESCAPED}]*$"
LINK_RE = re.compile(LINK_PATTERN)
#: A date is written YYYY-MM-DD (then a real date: the schema's ``format: date``).
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_DATE_RE = re.compile(DATE_PATTERN, re.ASCII)


def _safe(multiline: bool) -> AfterValidator:
    def check(text: str) -> str:
        bad = unsafe_char(text, multiline=multiline)
        if bad is not None:
            raise ValueError(f"contains {bad}")
        return text

    return AfterValidator(check)


def _link_text(value: Any) -> Any:
    if isinstance(value, str) and (LINK_RE.fullmatch(value) is None or unsafe_char(value)):
        raise ValueError("must be an http:// or https:// link with no spaces")
    return value


def _date_text(value: Any) -> Any:
    if isinstance(value, dt.datetime) or (
        isinstance(value, str) and _DATE_RE.fullmatch(value) is None
    ):
        raise ValueError("must be a date written YYYY-MM-DD, with no time")
    if not isinstance(value, str | dt.date):
        raise ValueError("must be a date written YYYY-MM-DD")
    return value


#: One line of text: stripped, 1 to 200 characters, no control, bidirectional or zero-width
#: character.
NonEmpty = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    _safe(multiline=False),
    Field(json_schema_extra={"pattern": ONE_LINE_PATTERN}),
]
#: Free text: newlines and tabs allowed, no other control, bidirectional or zero-width character.
FreeText = Annotated[
    str, _safe(multiline=True), Field(json_schema_extra={"pattern": MULTILINE_PATTERN})
]
Link = Annotated[
    HttpUrl, BeforeValidator(_link_text), Field(json_schema_extra={"pattern": LINK_PATTERN})
]
Date = Annotated[
    dt.date, BeforeValidator(_date_text), Field(json_schema_extra={"pattern": DATE_PATTERN})
]


def is_submission_id(name: str) -> bool:
    """Whether ``name`` follows the submission id rule."""
    return SUBMISSION_ID_RE.fullmatch(name) is not None


class Production(BaseModel):
    """How the responses were produced."""

    model_config = ConfigDict(extra="forbid")

    decoding: NonEmpty = Field(
        description="Decoding settings, e.g. 'temperature 0, max 2048 tokens'."
    )
    tools: StrictBool = Field(description="Whether the model could call tools.")
    web_access: StrictBool = Field(description="Whether the model could search or browse the web.")
    system_prompt: FreeText | None = Field(
        default=None, description="System prompt text or its hash."
    )
    notes: FreeText | None = Field(
        default=None,
        max_length=2000,
        description="Anything else a reader needs to reproduce the responses.",
    )


class TrainingData(BaseModel):
    """What the model was trained on that may overlap the benchmark (as MTEB's
    ``training_datasets``): declared by the submitter, shown on the model page."""

    model_config = ConfigDict(extra="forbid")

    datasets: list[NonEmpty] = Field(
        default_factory=list,
        max_length=100,
        description="Datasets the model was trained or tuned on that may overlap the benchmark's "
        "images, questions or sources, e.g. 'COCO 2017 train'; empty when none is known.",
    )
    contamination: Literal["none_known", "possible", "confirmed"] = Field(
        description="Whether the model may have seen the benchmark's questions, images or "
        "answers in training: none_known, possible or confirmed."
    )
    notes: FreeText | None = Field(
        default=None,
        max_length=2000,
        description="How the overlap was checked, or what is known of it.",
    )


class SubmissionMeta(BaseModel):
    """``submission.yaml``: who made the model and how the responses were produced.

    Every text value is one line (but ``production.notes`` and ``system_prompt``) with no control,
    bidirectional or zero-width character (U+E0000-U+E007F too); the link is http(s); the date real.
    """

    model_config = ConfigDict(extra="forbid")

    model_name: NonEmpty = Field(description="Name shown on the leaderboard, e.g. 'Acme-VL 2'.")
    organisation: NonEmpty = Field(description="Who built the model.")
    model_family: NonEmpty = Field(description="For judge self-preference analysis, e.g. 'gpt'.")
    link: Link = Field(description="Model card, paper or product page: an http(s) URL.")
    open_weights: StrictBool = Field(
        description="Whether the weights are publicly downloadable (true or false)."
    )
    parameters: NonEmpty | None = Field(default=None, description="e.g. '70B', or null if unknown.")
    date: Date = Field(description="When the responses were produced (YYYY-MM-DD).")
    contact: NonEmpty = Field(
        description="E-mail address or GitHub handle of a responsible person."
    )
    production: Production = Field(description="How the responses were produced.")
    training_data: TrainingData | None = Field(
        default=None,
        description="Training data that may overlap the benchmark, and known contamination; "
        "null when not declared.",
    )
    demo: StrictBool = Field(default=False, description="True for the synthetic demo models only.")


TokenCount = Annotated[StrictInt, Field(ge=0)]


class ResponseUsage(BaseModel):
    """The tokens the model's provider reported for one response (``gamut generate`` records
    them when the provider reports them): the prompt's and the reply's of the call that gave
    the response."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: TokenCount = Field(description="Prompt (input) tokens, image included.")
    output_tokens: TokenCount = Field(description="Reply (output) tokens.")


class ResponseLine(BaseModel):
    """One line of ``multimodal.jsonl`` or ``text_only.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    response: str
    usage: ResponseUsage | None = Field(
        default=None,
        description="Optional: the tokens the provider reported for this response (gamut "
        "generate writes it when the provider reports usage); the leaderboard shows the "
        "model's tokens of a setting when every response has it.",
    )
