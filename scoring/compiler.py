"""Compiling a meta-rubric into a flat list of checks (docs/contract.md §4).

Every check text is a self-contained English sentence: the judge sees one check at a time.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import StrEnum

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


def _at_least(topic: str, k: int, n: int, options: str) -> str:
    """The check of ``k`` of a list's ``n`` members (``options``: :func:`_options` of them,
    joined once per list, not once per threshold)."""
    return (
        f"Regarding {topic}, the response mentions at least {k} of the following "
        f"{n} options: {options}."
    )


def _mentions(topic: str, member: str) -> str:
    return f"Regarding {topic}, the response mentions {_clause(member)}."


def _in_order(topic: str, steps: list[str]) -> str:
    listed = "; ".join(f"({i}) {_clause(s)}" for i, s in enumerate(steps, 1))
    return (
        f"In describing {topic}, the response presents these steps in this order "
        f"(other steps may come between them): {listed}."
    )


def compile_rubric(rubric: MetaRubric) -> list[Check]:
    """Compile one meta-rubric into its checks, in item order.

    Args:
        rubric: a validated meta-rubric.

    Returns:
        The flat checklist; check ids are unique within the question.
    """
    qid = rubric.question_id
    out: list[Check] = []

    def add(
        item_id: str,
        suffix: str,
        kind: CheckKind,
        tier: Tier,
        secondary: bool,
        text: str,
        cites: list[str],
    ) -> None:
        # fields come from a validated rubric
        out.append(Check(qid, item_id + suffix, item_id, kind, tier, secondary, text, tuple(cites)))

    for item in rubric.items:
        iid, tier, cites = item.id, item.tier, item.cites
        insight: Insight | None = None
        if isinstance(item, Fact):
            add(iid, "", CheckKind.FACT, tier, False, item.text, cites)
        elif isinstance(item, StrictList):
            for j, m in enumerate(item.members, 1):
                add(iid, f".m{j}", CheckKind.MEMBER, tier, False, _mentions(item.topic, m), cites)
            insight = item.insight
        elif isinstance(item, FlexibleList):
            members = item.members
            options = _options(members)
            for j, b in enumerate(item.baselines, 1):
                add(
                    iid,
                    f".b{j}",
                    CheckKind.BASELINE,
                    tier,
                    False,
                    _at_least(item.topic, b, len(members), options),
                    cites,
                )
            lower = tier.lower()
            if len(members) <= SHORT_LIST_MAX and tier is not Tier.CONTEXT:
                for j, m in enumerate(members, 1):
                    add(
                        iid,
                        f".m{j}",
                        CheckKind.MEMBER,
                        lower,
                        True,
                        _mentions(item.topic, m),
                        cites,
                    )
            else:
                ks = item.coverage_thresholds or default_coverage_thresholds(
                    len(members), item.baselines
                )
                for j, k in enumerate(ks, 1):
                    add(
                        iid,
                        f".c{j}",
                        CheckKind.COVERAGE,
                        lower,
                        True,
                        _at_least(item.topic, k, len(members), options),
                        cites,
                    )
            insight = item.insight
        elif isinstance(item, Process):
            lower = tier.lower()
            for j, s in enumerate(item.steps, 1):
                text = (
                    f"In describing {item.topic}, the response includes the step: "
                    f"{_clause(s.text)}."
                )
                if s.required:
                    add(iid, f".s{j}", CheckKind.STEP, tier, False, text, cites)
                else:
                    add(iid, f".s{j}", CheckKind.STEP, lower, True, text, cites)
            required = [s.text for s in item.steps if s.required]
            if len(required) >= 2:
                add(
                    iid,
                    ".seq",
                    CheckKind.SEQUENCE,
                    tier,
                    False,
                    _in_order(item.topic, required),
                    cites,
                )
            if len(required) < len(item.steps) and len(item.steps) >= 2:
                add(
                    iid,
                    ".seq_all",
                    CheckKind.SEQUENCE,
                    lower,
                    True,
                    _in_order(item.topic, [s.text for s in item.steps]),
                    cites,
                )
            insight = item.insight
        elif isinstance(item, Relationship):
            add(
                iid,
                ".e",
                CheckKind.RELATION_ENTITY,
                tier,
                False,
                f"The response identifies {item.entity} as {_clause(item.relation)}.",
                cites,
            )
            for j, a in enumerate(item.aspects, 1):
                add(
                    iid,
                    f".a{j}",
                    CheckKind.RELATION_ASPECT,
                    tier,
                    False,
                    f"In relating it to {item.entity} ({item.relation}), the response states "
                    f"that: {_clause(a)}.",
                    cites,
                )
        if insight is not None:
            add(iid, ".i", CheckKind.INSIGHT, insight.tier, False, insight.text, cites)
    return out
