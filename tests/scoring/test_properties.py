"""Property-based tests over random valid rubrics and random verdicts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import (
    Check,
    CheckKind,
    MetaRubric,
    ScoringConfig,
    Tier,
    Verdict,
    compile_rubric,
    score_question,
)

TIERS = [t.value for t in Tier]
words = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(lambda s: s.strip() or "x")


@st.composite
def flexible_list(draw: st.DrawFn, iid: str) -> dict[str, Any]:
    n = draw(st.integers(2, 14))
    members = [f"option {i}" for i in range(n)]
    b1 = draw(st.integers(1, n - 1))
    baselines = [b1]
    if b1 + 1 <= n - 1 and draw(st.booleans()):
        baselines.append(draw(st.integers(b1 + 1, n - 1)))
    item: dict[str, Any] = {
        "id": iid,
        "type": "flexible_list",
        "tier": draw(st.sampled_from(TIERS)),
        "topic": draw(words),
        "members": members,
        "baselines": baselines,
    }
    above = list(range(max(baselines) + 1, n + 1))
    if above and draw(st.booleans()):
        item["coverage_thresholds"] = sorted(draw(st.sets(st.sampled_from(above), min_size=1)))
    return item


@st.composite
def item(draw: st.DrawFn, iid: str) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["fact", "strict_list", "flexible_list", "process", "relationship"])
    )
    tier = draw(st.sampled_from(TIERS))
    if kind == "fact":
        return {"id": iid, "type": "fact", "tier": tier, "text": draw(words)}
    if kind == "flexible_list":
        out = draw(flexible_list(iid))
    elif kind == "strict_list":
        n = draw(st.integers(1, 9))
        out = {
            "id": iid,
            "type": "strict_list",
            "tier": tier,
            "topic": draw(words),
            "members": [f"member {i}" for i in range(n)],
        }
    elif kind == "process":
        flags = draw(st.lists(st.booleans(), min_size=1, max_size=8))
        if not any(flags):
            flags[draw(st.integers(0, len(flags) - 1))] = True
        out = {
            "id": iid,
            "type": "process",
            "tier": tier,
            "topic": draw(words),
            "steps": [{"text": f"step {i}", "required": f} for i, f in enumerate(flags)],
        }
    else:
        return {
            "id": iid,
            "type": "relationship",
            "tier": tier,
            "entity": draw(words),
            "relation": draw(words),
            "aspects": [f"aspect {i}" for i in range(draw(st.integers(0, 4)))],
        }
    if draw(st.booleans()):
        out["insight"] = {"text": draw(words), "tier": draw(st.sampled_from(TIERS))}
    return out


@st.composite
def rubrics(draw: st.DrawFn) -> MetaRubric:
    n = draw(st.integers(1, 8))
    items = [draw(item(f"I{i}")) for i in range(1, n + 1)]
    return MetaRubric.model_validate({"question_id": "q-prop", "items": items})


verdict_values = st.sampled_from(list(Verdict))


@st.composite
def judged(draw: st.DrawFn) -> tuple[list[Check], dict[str, Verdict]]:
    checks = compile_rubric(draw(rubrics()))
    return checks, {c.check_id: draw(verdict_values) for c in checks}


@settings(max_examples=200)
@given(rubrics())
def test_check_ids_unique_and_tiers_follow_the_rules(r: MetaRubric) -> None:
    checks = compile_rubric(r)
    assert len({c.check_id for c in checks}) == len(checks)
    items = {i.id: i for i in r.items}
    for c in checks:
        it = items[c.item_id]
        assert c.check_id == c.item_id or c.check_id.startswith(c.item_id + ".")
        if c.kind is CheckKind.INSIGHT:
            insight = getattr(it, "insight", None)
            assert insight is not None and c.tier is insight.tier and not c.secondary
        elif c.secondary:
            assert c.tier is it.tier.lower()
        else:
            assert c.tier is it.tier
    assert Tier.CONTEXT.lower() is Tier.CONTEXT


@settings(max_examples=300)
@given(judged())
def test_scores_bounded_and_monotone_in_contradictions(
    case: tuple[list[Check], dict[str, Verdict]],
) -> None:
    checks, verdicts = case
    s = score_question(checks, verdicts)
    assert all(-1.0 - 1e-12 <= v <= 1.0 + 1e-12 for v in s.tiers.values())
    assert -1.0 - 1e-12 <= s.gamut <= 1.0 + 1e-12
    assert set(s.tiers) == {c.tier for c in checks}
    for cid in verdicts:
        worse = score_question(checks, verdicts | {cid: Verdict.CONTRADICTS})
        assert worse.gamut <= s.gamut + 1e-12


@settings(max_examples=100)
@given(rubrics())
def test_all_meets_is_one_and_all_contradicts_is_minus_one(r: MetaRubric) -> None:
    checks = compile_rubric(r)
    best = score_question(checks, dict.fromkeys((c.check_id for c in checks), "meets"))
    worst = score_question(checks, dict.fromkeys((c.check_id for c in checks), "contradicts"))
    assert best.gamut == pytest.approx(1.0) and all(v == 1.0 for v in best.tiers.values())
    assert worst.gamut == pytest.approx(-1.0) and all(v == -1.0 for v in worst.tiers.values())


@settings(max_examples=200)
@given(judged())
def test_present_tier_weights_renormalise_to_one(
    case: tuple[list[Check], dict[str, Verdict]],
) -> None:
    checks, verdicts = case
    cfg = ScoringConfig()
    s = score_question(checks, verdicts, cfg)
    weights = {t: cfg.tier_weights[t] for t in s.tiers}
    total = sum(weights.values())
    assert sum(w / total for w in weights.values()) == pytest.approx(1.0)
    assert s.gamut == pytest.approx(sum(s.tiers[t] * w / total for t, w in weights.items()))
