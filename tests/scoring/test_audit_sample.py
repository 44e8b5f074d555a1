"""The stratified draw of responses for the human audit."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.audit_sample import Response, draw_sample

DOMAINS = ("food", "plants", "art")


def responses(n_models: int = 4, per_domain: int = 10) -> list[Response]:
    return [
        Response(f"model-{m}", setting, f"{d}-{i:03d}", d)
        for m in range(n_models)
        for setting in ("multimodal", "text_only")
        for d in DOMAINS
        for i in range(per_domain)
    ]


def test_the_draw_is_spread_evenly_over_model_setting_and_domain() -> None:
    drawn = draw_sample(responses(), 48, seed=3)
    assert len(drawn) == len(set(drawn)) == 48
    per_stratum = Counter((r.submission_id, r.setting, r.domain) for r in drawn)
    assert len(per_stratum) == 24 and set(per_stratum.values()) == {2}


def test_unequal_strata_get_proportional_shares_and_ties_are_not_first_come() -> None:
    pool = responses(per_domain=10) + [
        Response(f"model-{m}", s, f"food-{i:03d}", "food")
        for m in range(4)
        for s in ("multimodal", "text_only")
        for i in range(10, 30)
    ]
    drawn = draw_sample(pool, 40, seed=1)
    per_domain = Counter(r.domain for r in drawn)
    # food strata hold 30 responses, the others 10: 240, 80 and 80 of 400
    assert per_domain["food"] == 24 and per_domain["plants"] == per_domain["art"] == 8
    # 24 equal strata and 12 to give: which get one is drawn, not the first in sort order
    firsts = {tuple(sorted({r.submission_id for r in draw_sample(responses(), 12, s)}))
              for s in range(5)}  # fmt: skip
    assert firsts != {("model-0", "model-1")}


def test_same_seed_same_draw_and_already_audited_responses_are_skipped() -> None:
    pool = responses()
    a = draw_sample(pool, 30, seed=9)
    assert a == draw_sample(pool, 30, seed=9) and a != draw_sample(pool, 30, seed=10)
    done = {(r.submission_id, r.setting, r.question_id) for r in a}
    b = draw_sample(pool, 30, seed=9, exclude=done)
    assert not done & {(r.submission_id, r.setting, r.question_id) for r in b}
    assert len(draw_sample(pool, 10_000, seed=0)) == len(pool)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 300), st.integers(0, 2**31))
def test_the_draw_has_n_distinct_responses_within_one_of_proportional(n: int, seed: int) -> None:
    pool = responses(n_models=3, per_domain=7)
    drawn = draw_sample(pool, n, seed)
    assert len(drawn) == min(n, len(pool)) == len(set(drawn))
    per_stratum = Counter((r.submission_id, r.setting, r.domain) for r in drawn)
    fair = min(n, len(pool)) / 18
    assert all(abs(per_stratum.get(k, 0) - fair) < 1 for k in
               {(r.submission_id, r.setting, r.domain) for r in pool})  # fmt: skip
