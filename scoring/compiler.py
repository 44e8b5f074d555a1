"""Compiling a meta-rubric into a flat list of checks (docs/contract.md §4).

Every check text is a self-contained English sentence: the judge sees one check at a time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, TypeAdapter

from scoring.rubric import (
    Fact,
    FlexibleList,
    Insight,
    MetaRubric,
    Process,
    Relationship,
    StrictList,
    Tier,
)

#: Largest flexible list that gets one extra-credit check per member (docs/contract.md §4).
SHORT_LIST_MAX = 7


class CheckKind(StrEnum):
    """What a check tests; one value per row of the compile table."""

    FACT = "fact"
    MEMBER = "member"
    BASELINE = "baseline"
    COVERAGE = "coverage"
    STEP = "step"
    SEQUENCE = "sequence"
    RELATION_ENTITY = "relation_entity"
    RELATION_ASPECT = "relation_aspect"
    INSIGHT = "insight"


@dataclass(frozen=True, slots=True)
class Check:
    """One criterion the judge applies to one response."""

    # a plain dataclass: 63,000 of them are built per compile at the benchmark's scale, 4 times
    # faster than a model; pydantic still gives its schema and JSON (see check_adapter)
    __pydantic_config__ = ConfigDict(extra="forbid")

    question_id: str
    check_id: str
    item_id: str
    kind: CheckKind
    tier: Tier
    secondary: bool
    text: str
    cites: tuple[str, ...] = ()


@functools.cache
def check_adapter() -> TypeAdapter[Check]:
    """Pydantic's view of :class:`Check`: its JSON Schema and JSON (built on first use)."""
    return TypeAdapter(Check)


def default_coverage_thresholds(n: int, baselines: list[int]) -> list[int]:
    """Coverage thresholds of a flexible list of ``n`` members when the rubric gives none.

    The distinct values of ceil(n/2) and ceil(3n/4) that exceed the largest baseline; if none does,
    the largest baseline plus one when that is at most ``n``; else no threshold.
    """
    top = max(baselines)
    ks = sorted({k for k in (math.ceil(n / 2), math.ceil(3 * n / 4)) if k > top})
    if ks:
        return ks
    return [top + 1] if top + 1 <= n else []


def _clause(text: str) -> str:
    """A rubric phrase without its closing full stop, so it can sit inside a sentence."""
    return text.strip().rstrip(".").rstrip()


def _options(members: list[str]) -> str:
    return "; ".join(_clause(m) for m in members)


def _at_least(topic: str, k: int, members: list[str]) -> str:
    """The check of ``k`` of a list's members."""
    return (
        f"Regarding {topic}, the response mentions at least {k} of the following "
        f"{len(members)} options: {_options(members)}."
    )


def _mentions(topic: str, member: str) -> str:
    return f"Regarding {topic}, the response mentions {_clause(member)}."


def _in_order(topic: str, steps: list[str]) -> str:
    listed = "; ".join(f"({i}) {_clause(s)}" for i, s in enumerate(steps, 1))
    return (
        f"In describing {topic}, the response presents these steps in this order "
        f"(other steps may come between them): {listed}."
    )


def _includes(topic: str, step: str) -> str:
    return f"In describing {topic}, the response includes the step: {_clause(step)}."


def _identifies(entity: str, relation: str) -> str:
    return f"The response identifies {entity} as {_clause(relation)}."


def _states(entity: str, relation: str, aspect: str) -> str:
    return f"In relating it to {entity} ({relation}), the response states that: {_clause(aspect)}."


#: What an item's rule emits for each check: id suffix, kind, secondary (extra credit, one tier
#: below the item's), and the function and arguments that make the check text (called only when
#: the text is wanted: the score tables need none).
_Emitted = Iterator[tuple[str, CheckKind, bool, Callable[..., str], tuple[Any, ...]]]


def _fact(item: Fact) -> _Emitted:
    yield "", CheckKind.FACT, False, str, (item.text,)


def _strict_list(item: StrictList) -> _Emitted:
    for j, m in enumerate(item.members, 1):
        yield f".m{j}", CheckKind.MEMBER, False, _mentions, (item.topic, m)


def _flexible_list(item: FlexibleList) -> _Emitted:
    members, topic = item.members, item.topic
    for j, b in enumerate(item.baselines, 1):
        yield f".b{j}", CheckKind.BASELINE, False, _at_least, (topic, b, members)
    if len(members) <= SHORT_LIST_MAX and item.tier is not Tier.CONTEXT:
        for j, m in enumerate(members, 1):
            yield f".m{j}", CheckKind.MEMBER, True, _mentions, (topic, m)
    else:
        ks = item.coverage_thresholds or default_coverage_thresholds(len(members), item.baselines)
        for j, k in enumerate(ks, 1):
            yield f".c{j}", CheckKind.COVERAGE, True, _at_least, (topic, k, members)


def _process(item: Process) -> _Emitted:
    for j, s in enumerate(item.steps, 1):
        yield f".s{j}", CheckKind.STEP, not s.required, _includes, (item.topic, s.text)
    required = [s.text for s in item.steps if s.required]
    if len(required) >= 2:
        yield ".seq", CheckKind.SEQUENCE, False, _in_order, (item.topic, required)
    if len(required) < len(item.steps) and len(item.steps) >= 2:
        every = [s.text for s in item.steps]
        yield ".seq_all", CheckKind.SEQUENCE, True, _in_order, (item.topic, every)


def _relationship(item: Relationship) -> _Emitted:
    entity, relation = item.entity, item.relation
    yield ".e", CheckKind.RELATION_ENTITY, False, _identifies, (entity, relation)
    for j, a in enumerate(item.aspects, 1):
        yield f".a{j}", CheckKind.RELATION_ASPECT, False, _states, (entity, relation, a)


#: The compile rule of each item type.
_RULES: dict[type[Any], Callable[[Any], _Emitted]] = {
    Fact: _fact,
    StrictList: _strict_list,
    FlexibleList: _flexible_list,
    Process: _process,
    Relationship: _relationship,
}


def _emitted(rubric: MetaRubric) -> Iterator[tuple[str, str, CheckKind, Tier, bool, Any, Any]]:
    """(item id, check id, kind, tier, secondary, text function, its arguments) of each check,
    in item order: each item by the rule of its type (:data:`_RULES`), then its insight."""
    for item in rubric.items:
        iid = item.id
        tiers = (item.tier, item.tier.lower())
        for suffix, kind, secondary, text, args in _RULES[type(item)](item):
            yield iid, iid + suffix, kind, tiers[secondary], secondary, text, args
        insight: Insight | None = vars(item).get("insight")  # pydantic: slow to miss a name
        if insight is not None:
            yield iid, iid + ".i", CheckKind.INSIGHT, insight.tier, False, str, (insight.text,)


def compile_rubric(rubric: MetaRubric) -> list[Check]:
    """Compile one validated meta-rubric into its checks, in item order (each item by its type's
    rule in :data:`_RULES`, then its insight); check ids are unique within the question."""
    qid = rubric.question_id
    cites = {item.id: tuple(item.cites) for item in rubric.items}  # ids are unique
    return [
        Check(qid, cid, iid, kind, tier, secondary, text(*args), cites[iid])
        for iid, cid, kind, tier, secondary, text, args in _emitted(rubric)
    ]


def check_codes(rubric: MetaRubric) -> list[tuple[str, CheckKind, Tier, bool]]:
    """(check id, kind, tier, secondary) of each check :func:`compile_rubric` makes, in its
    order, without making their texts (what the score tables need)."""
    return [(cid, kind, tier, sec) for _, cid, kind, tier, sec, _, _ in _emitted(rubric)]
