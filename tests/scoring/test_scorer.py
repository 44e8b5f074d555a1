"""docs/contract.md §6: tier scores, Gamut score, renormalisation, errors instead of zeros."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from scoring import (
    Check,
    CheckKind,
    GamutError,
    ScoringConfig,
    Tier,
    Verdict,
    score_question,
    tier_scores,
)

AC, V, C = Tier.ANSWER_CRITICAL, Tier.VALUABLE, Tier.CONTEXT


def check(cid: str, tier: Tier) -> Check:
    return Check(
        question_id="q",
        check_id=cid,
        item_id=cid,
        kind=CheckKind.FACT,
        tier=tier,
        secondary=False,
        text=f"text {cid}",
    )


def test_tier_formula_by_hand() -> None:
    # M=2, P=1, S=1, C=1: (2 + 0.5 - 2) / (2 + 1 + 1 + 2) = 0.5 / 6
    checks = [check(f"a{i}", AC) for i in range(5)]
    verdicts = {
        "a0": "meets",
        "a1": "meets",
        "a2": "partially_meets",
        "a3": "missing",
        "a4": "contradicts",
    }
    s = score_question(checks, verdicts)
    assert s.tiers == {AC: pytest.approx(0.5 / 6)}
    assert s.gamut == pytest.approx(0.5 / 6)


def test_weighted_average_over_three_tiers() -> None:
    checks = [check("a", AC), check("v", V), check("c", C)]
    s = score_question(checks, {"a": "meets", "v": "partially_meets", "c": "contradicts"})
    assert s.tiers == {AC: 1.0, V: 0.5, C: -1.0}
    assert s.gamut == pytest.approx(0.6 * 1 + 0.3 * 0.5 + 0.1 * -1)


def test_missing_tier_is_left_out_and_weights_renormalised() -> None:
    checks = [check("a", AC), check("c", C)]
    s = score_question(checks, {"a": "meets", "c": "missing"})
    assert set(s.tiers) == {AC, C}
    assert s.gamut == pytest.approx((0.6 * 1 + 0.1 * 0) / 0.7)


def test_only_context_checks() -> None:
    s = score_question([check("c", C)], {"c": Verdict.PARTIALLY_MEETS})
    assert s.gamut == pytest.approx(0.5)


def test_cautious_answer_outranks_confidently_wrong_one() -> None:
    checks = [check(f"a{i}", AC) for i in range(4)]
    cautious = score_question(
        checks, {"a0": "meets", "a1": "missing", "a2": "missing", "a3": "missing"}
    )
    wrong = score_question(
        checks, {"a0": "meets", "a1": "meets", "a2": "contradicts", "a3": "missing"}
    )
    assert cautious.gamut == pytest.approx(0.25)
    assert wrong.gamut == pytest.approx(0 / 6)
    assert cautious.gamut > wrong.gamut


def test_parameters_come_from_the_config() -> None:
    cfg = ScoringConfig(
        partial_credit=0.25, contradiction_penalty=-1.0, tier_weights={AC: 0.5, V: 0.25, C: 0.25}
    )
    checks = [check("a", AC), check("b", AC), check("v", V)]
    s = score_question(checks, {"a": "partially_meets", "b": "contradicts", "v": "meets"}, cfg)
    assert s.tiers[AC] == pytest.approx((0.25 - 1) / (1 + 1))
    assert s.gamut == pytest.approx((0.5 * -0.375 + 0.25 * 1) / 0.75)


def test_check_without_verdict_raises_naming_it() -> None:
    with pytest.raises(GamutError, match=r"question q: 1 check\(s\) have no verdict: b"):
        score_question([check("a", AC), check("b", V)], {"a": "meets"})


def test_unknown_verdict_raises_naming_it() -> None:
    with pytest.raises(GamutError, match=r"check a: unknown verdict 'yes' \(allowed: meets"):
        score_question([check("a", AC)], {"a": "yes"})


def test_verdict_for_unknown_check_raises() -> None:
    with pytest.raises(GamutError, match=r"verdicts for unknown check\(s\): zz"):
        score_question([check("a", AC)], {"a": "meets", "zz": "meets"})


def test_no_checks_raises() -> None:
    with pytest.raises(GamutError, match="no checks"):
        score_question([], {})


def test_vectorised_tier_scores_nan_for_empty_tier() -> None:
    out = tier_scores(np.array([[1, 0, 0, 0], [0, 0, 0, 0]]), ScoringConfig())
    assert out[0] == 1.0 and math.isnan(out[1])


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"partial_credit": 1.0}, "less than 1"),
        ({"partial_credit": 0.0}, "greater than 0"),
        ({"contradiction_penalty": 0.0}, "less than 0"),
        ({"tier_weights": {AC: 0.6, V: 0.4}}, "exactly one weight per tier"),
        ({"tier_weights": {AC: 0.6, V: 0.3, C: 0.3}}, "must sum to 1"),
    ],
)
def test_config_rules(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        ScoringConfig.model_validate(kwargs)
