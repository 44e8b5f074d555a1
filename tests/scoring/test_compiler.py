"""docs/contract.md §4: compile rules, check ids, tiers and the boundary cases named in the spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring import Check, CheckKind, MetaRubric, Tier, compile_rubric, default_coverage_thresholds

FIXTURE = Path(__file__).parent / "fixtures" / "pad_thai.json"
AC, V, C = Tier.ANSWER_CRITICAL, Tier.VALUABLE, Tier.CONTEXT


def rubric(*items: dict[str, Any]) -> MetaRubric:
    return MetaRubric.model_validate({"question_id": "q-1", "items": list(items)})


def flex(n: int, tier: str = "answer_critical", **extra: Any) -> dict[str, Any]:
    item = {
        "id": "L",
        "type": "flexible_list",
        "tier": tier,
        "topic": "dishes",
        "members": [f"dish {i}" for i in range(1, n + 1)],
        "baselines": [2],
    }
    return item | extra


def by_id(checks: list[Check]) -> dict[str, Check]:
    return {c.check_id: c for c in checks}


def test_fact_is_one_check_at_its_tier() -> None:
    (c,) = compile_rubric(
        rubric({"id": "I1", "type": "fact", "tier": "valuable", "text": "Names the architect."})
    )
    assert (c.check_id, c.item_id, c.kind, c.tier, c.secondary) == ("I1", "I1", "fact", V, False)
    assert c.text == "Names the architect."
    assert c.question_id == "q-1"


def test_strict_list_one_required_check_per_member() -> None:
    checks = compile_rubric(
        rubric(
            {
                "id": "I2",
                "type": "strict_list",
                "tier": "answer_critical",
                "topic": "core ingredients",
                "members": ["rice noodles", "tamarind paste"],
            }
        )
    )
    assert [c.check_id for c in checks] == ["I2.m1", "I2.m2"]
    assert all(c.kind is CheckKind.MEMBER and c.tier is AC and not c.secondary for c in checks)
    assert checks[1].text == "Regarding core ingredients, the response mentions tamarind paste."


def test_paper_worked_example_seven_dishes() -> None:
    """An AC flexible list of 7 dishes with baseline 2: one AC threshold + 7 Valuable per-dish."""
    checks = compile_rubric(rubric(flex(7)))
    assert [c.check_id for c in checks] == ["L.b1"] + [f"L.m{i}" for i in range(1, 8)]
    base, *members = checks
    assert (base.kind, base.tier, base.secondary) == (CheckKind.BASELINE, AC, False)
    assert all((m.kind, m.tier, m.secondary) == (CheckKind.MEMBER, V, True) for m in members)
    assert "at least 2 of the following 7 options" in base.text
    assert all(f"dish {i}" in base.text for i in range(1, 8))


def test_eight_members_is_a_long_list_with_default_coverage() -> None:
    checks = by_id(compile_rubric(rubric(flex(8))))
    assert set(checks) == {"L.b1", "L.c1", "L.c2"}  # ceil(8/2)=4, ceil(3*8/4)=6
    assert "at least 4 of the following 8 options" in checks["L.c1"].text
    assert "at least 6 of the following 8 options" in checks["L.c2"].text
    assert all(checks[k].tier is V and checks[k].secondary for k in ("L.c1", "L.c2"))
    assert checks["L.c2"].kind is CheckKind.COVERAGE


def test_context_short_list_is_treated_like_a_long_one() -> None:
    checks = by_id(compile_rubric(rubric(flex(4, tier="context"))))
    # ceil(4/2)=2 is not above the baseline 2; ceil(3*4/4)=3 is.
    assert set(checks) == {"L.b1", "L.c1"}
    assert checks["L.c1"].tier is C and checks["L.c1"].secondary
    assert checks["L.b1"].tier is C and not checks["L.b1"].secondary
    assert "at least 3 of the following 4 options" in checks["L.c1"].text


def test_valuable_short_list_members_drop_to_context() -> None:
    checks = compile_rubric(rubric(flex(3, tier="valuable")))
    assert [c.tier for c in checks] == [V, C, C, C]


def test_explicit_coverage_thresholds_win() -> None:
    checks = by_id(compile_rubric(rubric(flex(10, coverage_thresholds=[3, 9]))))
    assert "at least 3 of the following 10" in checks["L.c1"].text
    assert "at least 9 of the following 10" in checks["L.c2"].text


def test_two_baselines_two_checks_at_item_tier() -> None:
    checks = by_id(compile_rubric(rubric(flex(12, baselines=[2, 4]))))
    assert checks["L.b1"].tier is AC and checks["L.b2"].tier is AC
    assert "at least 4 of the following 12" in checks["L.b2"].text
    # ceil(6), ceil(9) both exceed max(baselines)=4
    assert "at least 6 of" in checks["L.c1"].text and "at least 9 of" in checks["L.c2"].text


def test_default_coverage_fallback_and_distinctness() -> None:
    assert default_coverage_thresholds(8, [2]) == [4, 6]
    assert default_coverage_thresholds(9, [1, 6]) == [7]  # ceil 5 and 7: only 7 exceeds 6
    assert default_coverage_thresholds(8, [1, 6]) == [7]  # 4 and 6 do not exceed 6: fallback 6+1
    assert default_coverage_thresholds(8, [7]) == [8]  # fallback to the pool size
    assert default_coverage_thresholds(2, [1]) == [2]  # ceil(1)=1, ceil(1.5)=2: distinct values
    assert default_coverage_thresholds(5, [5]) == []  # nothing above the baseline fits


def test_process_required_and_optional_steps_and_two_sequences() -> None:
    r = MetaRubric.model_validate(json.loads(FIXTURE.read_text()))
    checks = by_id([c for c in compile_rubric(r) if c.item_id == "I4"])
    assert list(checks) == ["I4.s1", "I4.s2", "I4.s3", "I4.seq", "I4.seq_all"]
    assert (checks["I4.s1"].tier, checks["I4.s1"].secondary) == (V, False)
    assert (checks["I4.s2"].tier, checks["I4.s2"].secondary) == (C, True)
    assert (checks["I4.seq"].tier, checks["I4.seq"].secondary) == (V, False)
    assert (checks["I4.seq_all"].tier, checks["I4.seq_all"].secondary) == (C, True)
    seq, seq_all = checks["I4.seq"].text, checks["I4.seq_all"].text
    assert "(1) Soak the dried noodles; (2) Stir-fry the noodles with the sauce" in seq
    assert "Fry garlic" not in seq
    assert seq_all.index("Soak") < seq_all.index("Fry garlic") < seq_all.index("Stir-fry")


def _process(*required: bool, tier: str = "answer_critical") -> list[Check]:
    steps = [{"text": f"step {i}", "required": r} for i, r in enumerate(required, 1)]
    return compile_rubric(
        rubric({"id": "P", "type": "process", "tier": tier, "topic": "making it", "steps": steps})
    )


def test_process_sequence_boundaries() -> None:
    assert [c.check_id for c in _process(True)] == ["P.s1"]
    assert [c.check_id for c in _process(True, True)] == ["P.s1", "P.s2", "P.seq"]
    # one required step: no required-order check, but a full-ordering one
    assert [c.check_id for c in _process(True, False)] == ["P.s1", "P.s2", "P.seq_all"]
    assert [c.kind for c in _process(True, False)][-1] is CheckKind.SEQUENCE


def test_context_process_optional_step_stays_context() -> None:
    checks = by_id(_process(True, False, True, tier="context"))
    assert checks["P.s2"].tier is C and checks["P.s2"].secondary
    assert checks["P.seq_all"].tier is C


def test_relationship_entity_and_aspects() -> None:
    r = MetaRubric.model_validate(json.loads(FIXTURE.read_text()))
    checks = [c for c in compile_rubric(r) if c.item_id == "I5"]
    assert [c.check_id for c in checks] == ["I5.e", "I5.a1", "I5.a2"]
    assert [c.kind for c in checks] == ["relation_entity", "relation_aspect", "relation_aspect"]
    assert all(c.tier is C and not c.secondary for c in checks)
    assert checks[0].text == (
        "The response identifies pad see ew as a related Thai stir-fried noodle dish."
    )
    assert "pad see ew" in checks[2].text and "soy sauce rather than tamarind" in checks[2].text
    only_entity = compile_rubric(
        rubric(
            {
                "id": "R",
                "type": "relationship",
                "tier": "valuable",
                "entity": "X",
                "relation": "its rival",
                "aspects": [],
            }
        )
    )
    assert [c.check_id for c in only_entity] == ["R.e"]


def test_insight_at_its_own_tier_and_not_secondary() -> None:
    r = MetaRubric.model_validate(json.loads(FIXTURE.read_text()))
    (insight,) = [c for c in compile_rubric(r) if c.kind is CheckKind.INSIGHT]
    assert (insight.check_id, insight.tier, insight.secondary) == ("I3.i", C, False)
    assert insight.text == "Notes that a protein is almost always included."


def test_full_example_counts_and_cites() -> None:
    r = MetaRubric.model_validate(json.loads(FIXTURE.read_text()))
    checks = compile_rubric(r)
    assert len(checks) == 1 + 3 + (1 + 7 + 1) + 5 + 3
    assert len({c.check_id for c in checks}) == len(checks)
    assert all(c.cites == ("S1",) for c in checks if c.item_id != "I5")


def test_member_text_full_stop_is_not_doubled() -> None:
    (c,) = compile_rubric(
        rubric(
            {
                "id": "S",
                "type": "strict_list",
                "tier": "valuable",
                "topic": "colours",
                "members": ["red."],
            }
        )
    )
    assert c.text == "Regarding colours, the response mentions red."


@pytest.mark.parametrize("n", [3, 5, 7, 8, 13, 40])
def test_every_threshold_text_enumerates_all_options(n: int) -> None:
    for c in compile_rubric(rubric(flex(n))):
        if c.kind in (CheckKind.BASELINE, CheckKind.COVERAGE):
            assert f"of the following {n} options" in c.text
            assert all(f"dish {i}" in c.text for i in range(1, n + 1))
