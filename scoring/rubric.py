"""The meta-rubric (docs/contract.md §3): a pydantic v2 model with every structural rule enforced.

``MetaRubric.model_validate(obj)`` raises :class:`~scoring.errors.RubricError` listing every broken
rule at once, each naming the question, the item and the rule.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StrictBool,
    StringConstraints,
    ValidationError,
    model_validator,
)

from scoring.errors import Problem, RubricError

#: Text that is not blank (the pattern says so to a JSON Schema validator: one non-space).
NonEmpty = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1),
    Field(json_schema_extra={"pattern": r"\S"}),
]


def _json_integer(value: Any) -> Any:
    """A JSON integer only: ``true`` and ``"2"`` are not counts (pydantic's lax mode would
    take them; JSON Schema's ``integer`` does not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a whole number")
    return value


#: A whole number as JSON Schema means it (``2`` or ``2.0``; never ``true`` or ``"2"``).
Count = Annotated[int, BeforeValidator(_json_integer)]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class Tier(StrEnum):
    """Importance tier of a check, highest first."""

    ANSWER_CRITICAL = "answer_critical"
    VALUABLE = "valuable"
    CONTEXT = "context"

    def lower(self) -> Tier:
        """One level lower: AC -> V, V -> C, and C stays C (there is no tier beneath Context)."""
        return _LOWER[self]

    @property
    def short(self) -> str:
        """The abbreviation used in tables: AC, V or C."""
        return {"answer_critical": "AC", "valuable": "V", "context": "C"}[self.value]


_LOWER = dict(zip(Tier, [*list(Tier)[1:], Tier.CONTEXT], strict=True))


class ItemType(StrEnum):
    """The five item types of a meta-rubric."""

    FACT = "fact"
    STRICT_LIST = "strict_list"
    FLEXIBLE_LIST = "flexible_list"
    PROCESS = "process"
    RELATIONSHIP = "relationship"


class _Strict(BaseModel):
    # validators are built on first use: commands that only need the enums and Identifier (the
    # config, the questions) do not pay for every rubric model
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Snippet(_Strict):
    """A short piece of web evidence that items cite."""

    id: Identifier
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")]
    title: NonEmpty
    text: NonEmpty


class Insight(_Strict):
    """A synthesis across the members or steps of a list-like item, at its own tier."""

    text: NonEmpty
    tier: Tier


class Step(_Strict):
    """One step of a process."""

    text: NonEmpty
    required: StrictBool


class _Item(_Strict):
    id: Identifier
    tier: Tier
    cites: list[Identifier] = Field(default_factory=list)


def _unique(values: list[str], what: str) -> list[str]:
    counts = Counter(v.casefold() for v in values)
    dupes = {v for v in values if counts[v.casefold()] > 1}
    if dupes:
        raise ValueError(f"{what} must be distinct; repeated: {', '.join(sorted(dupes))}")
    return values


#: List members: distinct, compared case-folded.
Members = Annotated[list[NonEmpty], AfterValidator(lambda v: _unique(v, "members"))]


class Fact(_Item):
    """One discrete fact."""

    type: Literal["fact"]
    text: NonEmpty


class StrictList(_Item):
    """A finite set in which every member is required."""

    type: Literal["strict_list"]
    topic: NonEmpty
    members: Members = Field(min_length=1, description="Distinct (compared case-folded).")
    insight: Insight | None = None


class FlexibleList(_Item):
    """A pool of valid options: enough coverage is required, no member is."""

    type: Literal["flexible_list"]
    topic: NonEmpty
    members: Members = Field(min_length=2, description="Distinct (compared case-folded).")
    baselines: list[Count] = Field(
        min_length=1,
        max_length=2,
        description="1 or 2 strictly increasing counts, each at least 1 and below the number of "
        "members.",
    )
    coverage_thresholds: list[Count] | None = Field(
        default=None,
        description="When given, not empty: strictly increasing counts, each above the largest "
        "baseline and at most the number of members.",
    )
    insight: Insight | None = None

    @model_validator(mode="after")
    def _thresholds(self) -> FlexibleList:
        n = len(self.members)
        b = self.baselines
        if any(x < 1 or x >= n for x in b):
            raise ValueError(
                f"baselines {b} must each be >= 1 and < the number of members ({n}); "
                "a baseline equal to the pool size makes every member required: use a strict_list"
            )
        if len(b) == 2 and not b[0] < b[1]:
            raise ValueError(f"baselines {b} must be strictly increasing")
        if self.coverage_thresholds is not None:
            c = self.coverage_thresholds
            if not c:
                raise ValueError("coverage_thresholds, when given, must not be empty (omit it)")
            if any(x <= max(b) or x > n for x in c):
                raise ValueError(
                    f"coverage_thresholds {c} must each be > the largest baseline ({max(b)}) "
                    f"and <= the number of members ({n})"
                )
            if any(x >= y for x, y in itertools.pairwise(c)):
                raise ValueError(f"coverage_thresholds {c} must be strictly increasing")
        return self


class Process(_Item):
    """Ordered steps whose order carries meaning."""

    type: Literal["process"]
    topic: NonEmpty
    steps: list[Step] = Field(min_length=1, description="At least one of them required.")
    insight: Insight | None = None

    @model_validator(mode="after")
    def _one_required(self) -> Process:
        if not any(s.required for s in self.steps):
            raise ValueError("a process needs at least one required step")
        return self


class Relationship(_Item):
    """A connection or contrast with another entity."""

    type: Literal["relationship"]
    entity: NonEmpty
    relation: NonEmpty
    aspects: list[NonEmpty] = Field(default_factory=list)


Item = Annotated[
    Fact | StrictList | FlexibleList | Process | Relationship, Field(discriminator="type")
]


def _problems_from(err: ValidationError, data: Any, file: str) -> list[Problem]:
    qid = data.get("question_id") if isinstance(data, dict) else None
    items = data.get("items") if isinstance(data, dict) else None
    problems = []
    for e in err.errors(include_url=False):
        loc = list(e["loc"])
        item_id = None
        if len(loc) >= 2 and loc[0] == "items" and isinstance(loc[1], int):
            raw = items[loc[1]] if isinstance(items, list) and loc[1] < len(items) else None
            item_id = raw.get("id") if isinstance(raw, dict) else None
            item_id = str(item_id) if item_id is not None else f"items[{loc[1]}]"
            # drop the index and the discriminator tag pydantic inserts
            loc = [p for p in loc[2:] if p not in {t.value for t in ItemType}]
        field = ".".join(str(p) for p in loc)
        msg = e["msg"].removeprefix("Value error, ")
        rule = f"{field}: {msg}" if field else msg
        who = str(qid) if qid is not None else "?"
        problems.append(Problem(file, None, rule, _hint(e["type"], field), who, item_id))
    return problems


def _hint(err_type: str, field: str) -> str:
    if err_type == "missing":
        return f"add the required field '{field.rsplit('.', 1)[-1]}'"
    if err_type == "extra_forbidden":
        return "remove the field or fix its spelling (docs/contract.md §3 lists the allowed fields)"
    if err_type == "union_tag_invalid":
        return "type must be one of: " + ", ".join(t.value for t in ItemType)
    return "see docs/contract.md §3 for this field's rule"


class MetaRubric(_Strict):
    """One question's meta-rubric (docs/contract.md §3), with the rules across values the JSON
    Schema cannot state: unique ids, cited snippets exist, distinct list members, bounded
    thresholds."""

    question_id: Identifier
    snippets: list[Snippet] = Field(
        default_factory=list, description="Each with an id unique within the rubric."
    )
    items: list[Item] = Field(
        min_length=1,
        description="Each with an id unique within the rubric; its cites name snippet ids.",
    )

    @model_validator(mode="wrap")
    @classmethod
    def _report_all(cls, data: Any, handler: ModelWrapValidatorHandler[MetaRubric]) -> MetaRubric:
        problems = cross_reference_problems(data) if isinstance(data, dict) else []
        try:
            rubric = handler(data)
        except ValidationError as err:
            problems = _problems_from(err, data, "<rubric>") + problems
        if problems:
            raise RubricError(problems, "invalid meta-rubric")
        return rubric


def _repeated(ids: list[Any]) -> list[str]:
    """The ids that occur more than once, as text, sorted."""
    with contextlib.suppress(TypeError):  # an unhashable id (a list, an object) is counted
        if len(set(ids)) == len(ids):
            return []
    return sorted({str(i) for i in ids if ids.count(i) > 1})


def cross_reference_problems(data: dict[str, Any], file: str = "<rubric>") -> list[Problem]:
    """Rules that span items, checked on the raw object: unique ids and citations that resolve."""
    qid = str(data.get("question_id", "?"))
    raw_snippets, raw_items = data.get("snippets"), data.get("items")
    snippets: list[Any] = raw_snippets if isinstance(raw_snippets, list) else []
    items: list[Any] = raw_items if isinstance(raw_items, list) else []
    snippet_ids = [s.get("id") for s in snippets if isinstance(s, dict)]
    item_ids = [i.get("id") for i in items if isinstance(i, dict)]
    out: list[Problem] = []
    for what, ids in (("snippet", snippet_ids), ("item", item_ids)):
        for i in _repeated(ids):
            msg, fix = f"{what} id {i!r} is used more than once", f"give every {what} a unique id"
            out.append(Problem(file, None, msg, fix, qid, i if what == "item" else None))
    known = set(snippet_ids)
    for item in items:
        cites = item.get("cites") if isinstance(item, dict) else None
        for c in cites if isinstance(cites, list) else []:
            if c not in known:
                fix = "cite only ids listed in 'snippets'"
                iid = str(item.get("id"))
                out.append(Problem(file, None, f"cites: unknown snippet {c!r}", fix, qid, iid))
    return out
