"""docs/contract.md §3: every structural rule of the meta-rubric, with its message asserted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from scoring import MetaRubric, RubricError
from scoring.compiler import Check, CheckKind, compile_rubric

FIXTURE = Path(__file__).parent / "fixtures" / "pad_thai.json"


@pytest.fixture
def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def _error(obj: dict[str, Any]) -> str:
    with pytest.raises(RubricError) as info:
        MetaRubric.model_validate(obj)
    return str(info.value)


def _item(raw: dict[str, Any], item_id: str) -> dict[str, Any]:
    item: dict[str, Any] = next(i for i in raw["items"] if i["id"] == item_id)
    return item


def test_the_spec_example_is_valid(raw: dict[str, Any]) -> None:
    r = MetaRubric.model_validate(raw)
    assert [i.type for i in r.items] == [
        "fact",
        "strict_list",
        "flexible_list",
        "process",
        "relationship",
    ]


def test_message_names_question_item_and_rule(raw: dict[str, Any]) -> None:
    _item(raw, "I3")["baselines"] = [7]
    msg = _error(raw)
    assert "question food-0007, item I3" in msg
    assert "baselines [7] must each be >= 1 and < the number of members (7)" in msg


def test_every_problem_is_reported_at_once(raw: dict[str, Any]) -> None:
    _item(raw, "I2")["members"] = []
    _item(raw, "I4")["steps"] = [{"text": "Serve", "required": False}]
    _item(raw, "I5")["cites"] = ["S9"]
    msg = _error(raw)
    assert "item I2" in msg and "members" in msg
    assert "item I4" in msg and "at least one required step" in msg
    assert "item I5" in msg and "unknown snippet 'S9'" in msg


@pytest.mark.parametrize(
    ("baselines", "fragment"),
    [
        ([0], "must each be >= 1"),
        ([7], "< the number of members (7)"),
        ([3, 2], "strictly increasing"),
        ([2, 2], "strictly increasing"),
        ([1, 2, 3], "at most 2 items"),
        ([], "at least 1 item"),
    ],
)
def test_flexible_list_baselines(raw: dict[str, Any], baselines: list[int], fragment: str) -> None:
    _item(raw, "I3")["baselines"] = baselines
    assert fragment in _error(raw)


def _checks_of(rubric: MetaRubric, item_id: str, kind: CheckKind) -> list[Check]:
    return [c for c in compile_rubric(rubric) if c.item_id == item_id and c.kind is kind]


def test_baseline_boundary_just_below_pool_size_is_valid(raw: dict[str, Any]) -> None:
    _item(raw, "I3")["baselines"] = [1, 6]
    r = MetaRubric.model_validate(raw)
    # one baseline check per baseline, the largest asking for 6 of the 7 members
    texts = [c.text for c in _checks_of(r, "I3", CheckKind.BASELINE)]
    assert len(texts) == 2 and "at least 6" in texts[1]


@pytest.mark.parametrize(
    ("thresholds", "fragment"),
    [
        ([2], "> the largest baseline (2)"),
        ([8], "<= the number of members (7)"),
        ([5, 4], "strictly increasing"),
        ([], "must not be empty"),
    ],
)
def test_coverage_thresholds(raw: dict[str, Any], thresholds: list[int], fragment: str) -> None:
    _item(raw, "I3")["coverage_thresholds"] = thresholds
    assert fragment in _error(raw)


def test_coverage_threshold_equal_to_pool_size_is_valid(raw: dict[str, Any]) -> None:
    _item(raw, "I3")["coverage_thresholds"] = [3, 7]
    _item(raw, "I3")["tier"] = "context"  # a context list is checked by coverage, not per member
    r = MetaRubric.model_validate(raw)
    texts = [c.text for c in _checks_of(r, "I3", CheckKind.COVERAGE)]
    assert len(texts) == 2 and "at least 7" in texts[1]


def test_flexible_list_needs_two_members(raw: dict[str, Any]) -> None:
    _item(raw, "I3")["members"] = ["shrimp"]
    _item(raw, "I3")["baselines"] = [1]
    assert "members: List should have at least 2 items" in _error(raw)


def test_strict_list_needs_a_member_and_distinct_members(raw: dict[str, Any]) -> None:
    bad = copy.deepcopy(raw)
    _item(bad, "I2")["members"] = []
    assert "members: List should have at least 1 item" in _error(bad)
    _item(raw, "I2")["members"] = ["fish sauce", "Fish Sauce"]
    assert "members must be distinct" in _error(raw)


def test_process_needs_a_required_step(raw: dict[str, Any]) -> None:
    for s in _item(raw, "I4")["steps"]:
        s["required"] = False
    assert "question food-0007, item I4: a process needs at least one required step" in _error(raw)


def test_relationship_may_have_no_aspects(raw: dict[str, Any]) -> None:
    _item(raw, "I5")["aspects"] = []
    r = MetaRubric.model_validate(raw)
    assert _checks_of(r, "I5", CheckKind.RELATION_ASPECT) == []
    assert _checks_of(r, "I5", CheckKind.RELATION_ENTITY)  # the entities are still checked


def test_duplicate_item_and_snippet_ids(raw: dict[str, Any]) -> None:
    _item(raw, "I5")["id"] = "I4"
    raw["snippets"][1]["id"] = "S1"
    msg = _error(raw)
    assert "item id 'I4' is used more than once" in msg
    assert "snippet id 'S1' is used more than once" in msg


def test_unknown_type_and_unknown_field(raw: dict[str, Any]) -> None:
    _item(raw, "I1")["type"] = "opinion"
    _item(raw, "I2")["colour"] = "red"
    msg = _error(raw)
    assert "item I1" in msg and "type must be one of: fact, strict_list" in msg
    assert "item I2: colour: Extra inputs are not permitted" in msg


def test_insight_only_on_list_like_items(raw: dict[str, Any]) -> None:
    _item(raw, "I1")["insight"] = {"text": "x", "tier": "context"}
    assert "item I1: insight: Extra inputs are not permitted" in _error(raw)


def test_unknown_tier(raw: dict[str, Any]) -> None:
    _item(raw, "I1")["tier"] = "critical"
    assert "item I1: tier: Input should be 'answer_critical', 'valuable' or 'context'" in _error(
        raw
    )


def test_rubric_needs_items_and_a_question_id(raw: dict[str, Any]) -> None:
    raw["items"] = []
    del raw["question_id"]
    msg = _error(raw)
    assert "question_id: Field required" in msg
    assert "items: List should have at least 1 item" in msg


def test_snippet_url_must_be_http(raw: dict[str, Any]) -> None:
    raw["snippets"][0]["url"] = "javascript:alert(1)"
    assert "url: String should match pattern" in _error(raw)
