"""The pure arithmetic of the score tables: counts, percentiles, bootstrap, ranks, tau, kappa."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.stats import kendalltau

from scoring.check_table import CheckTable
from scoring.compiler import compile_rubric
from scoring.questions import Question
from scoring.rubric import MetaRubric
from scoring.scorer import ScoringConfig, score_question
from scoring.tables.bootstrap import (
    Ask,
    estimate,
    expanded_tails,
    nan_percentiles,
    paired,
    percentile_ci,
    rank_many,
    resample_weights,
    weighted_means,
)
from scoring.tables.checks import index_checks
from scoring.tables.core import Status, count_verdicts, question_level
from scoring.tables.judges import cohen_kappa, kendall_tau_b
from scoring.verdicts import VERDICT_ORDER
from tests.tables.project import QUESTIONS, RUBRICS


def test_count_verdicts_matches_a_loop_for_sorted_and_unsorted_keys() -> None:
    rng = np.random.default_rng(1)
    verdicts = rng.integers(-1, 4, size=(5, 40)).astype(np.int8)
    for key in (np.sort(rng.integers(0, 9, 40)), rng.integers(0, 9, 40)):
        got = count_verdicts(verdicts, key, 10)
        want = np.zeros((5, 10, 4), np.int64)
        for g in range(5):
            for k in range(40):
                if verdicts[g, k] >= 0:
                    want[g, key[k], verdicts[g, k]] += 1
        assert (got == want).all()
        assert got[:, 9].sum() == 0  # a key with no check counts nothing


def test_resample_weights_are_reproducible_resamples() -> None:
    w = resample_weights(50, 200, seed=3)
    assert w.shape == (200, 50) and (w.sum(axis=1) == 50).all()
    assert (w == resample_weights(50, 200, seed=3)).all()
    assert not (w == resample_weights(50, 200, seed=4)).all()


def test_nan_percentiles_match_numpy() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(101, 6))
    x[rng.random(x.shape) < 0.2] = np.nan
    x[:, 5] = np.nan
    lo, hi = nan_percentiles(x, (2.5, 97.5))
    want_lo = np.nanpercentile(x[:, :5], 2.5, axis=0)
    want_hi = np.nanpercentile(x[:, :5], 97.5, axis=0)
    assert lo[:5] == pytest.approx(want_lo) and hi[:5] == pytest.approx(want_hi)
    assert np.isnan(lo[5]) and np.isnan(hi[5])
    scratch = x.copy()  # in place: the same percentiles, and the array is left sorted
    in_lo, in_hi = nan_percentiles(scratch, (2.5, 97.5), overwrite=True)
    assert np.array_equal(in_lo, lo, equal_nan=True) and np.array_equal(in_hi, hi, equal_nan=True)
    assert np.array_equal(scratch, np.sort(x, axis=0), equal_nan=True)


def test_rankings_taken_together_are_each_ranking_taken_alone() -> None:
    rng = np.random.default_rng(5)
    rankings = []
    for n in (5, 0, 1, 2, 7):  # with an empty ranking and a single model among them
        value = np.round(rng.normal(size=n), 1)  # rounded: some equal scores
        boot = value + rng.normal(scale=0.3, size=(400, n))
        rankings.append(Ask(value, boot, 40))
    together = rank_many(rankings)
    for (value, boot, n_q, _), got in zip(rankings, together, strict=True):
        (alone,) = rank_many([Ask(value, boot.copy(), n_q)])
        for field in ("rank", "rank_lo", "rank_hi", "tie_group"):
            assert np.array_equal(getattr(got, field), getattr(alone, field)), field
    assert [r.rank.size for r in together] == [5, 0, 1, 2, 7]


def test_weighted_means_leave_out_undefined_questions() -> None:
    values = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [2.0, 4.0, 6.0]])
    weights = np.array([[1.0, 1.0, 1.0], [0.0, 3.0, 0.0], [2.0, 0.0, 1.0]])
    got = weighted_means(weights, values)
    assert got[0] == pytest.approx([2.0, np.nan, 4.0], nan_ok=True)
    assert np.isnan(got[1, 0]) and got[1, 2] == pytest.approx(4.0)  # no weight on a defined value
    assert got[2] == pytest.approx([5 / 3, np.nan, 10 / 3], nan_ok=True)
    sub = weighted_means(np.ones((1, 3)), values, np.array([1, 2]))
    assert sub[0] == pytest.approx([3.0, np.nan, 5.0], nan_ok=True)


def test_paired_difference_uses_the_same_resamples() -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(size=200)
    values = np.vstack([base, base + 0.01])  # a tiny but perfectly consistent difference
    est = estimate(resample_weights(200, 300, 9), values)
    d = paired(est.take(np.array([1])), est.take(np.array([0])))
    assert d.value[0] == pytest.approx(0.01)
    assert d.lo[0] == pytest.approx(0.01) and d.hi[0] == pytest.approx(0.01)
    assert est.hi[0] - est.lo[0] > 0.1  # each side alone is far less certain


def test_rank_models_ties_and_ranges() -> None:
    value = np.array([1.0, 1.0, 0.0])
    boot = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, -1.0]])
    certain_boot = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    empty = Ask(np.zeros(0), np.zeros((2, 0)), 0)
    r, certain, none = rank_many([Ask(value, boot, 0), Ask(value, certain_boot, 9), empty])
    assert list(r.rank) == [1, 1, 3] and list(r.tie_group) == [1, 1, 1]  # nothing significant
    assert list(certain.tie_group) == [1, 1, 3]  # 1 + the two models significantly better
    assert list(r.rank_lo) == [1, 1, 3] and list(r.rank_hi) == [1, 1, 3]
    assert none.rank.size == 0


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_b_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, 12).astype(float)  # with ties
    y = x + rng.integers(-2, 3, 12)
    assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y, variant="b").statistic)
    assert np.isnan(kendall_tau_b(np.ones(3), y[:3])) and np.isnan(kendall_tau_b(x[:1], y[:1]))


def test_cohen_kappa_on_a_known_table() -> None:
    confusion = np.zeros((4, 4), np.int64)
    confusion[:2, :2] = [[20, 5], [10, 15]]  # po 0.7, pe 0.5*0.6 + 0.5*0.4 = 0.5
    kappa, agreement, n = cohen_kappa(confusion)
    assert (kappa, agreement, n) == (pytest.approx(0.4), pytest.approx(0.7), 50)
    assert np.isnan(cohen_kappa(np.diag([5, 0, 0, 0]))[0])  # one verdict only: chance is 1
    assert cohen_kappa(np.diag([3, 2, 1, 0]))[0] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_question_level_agrees_with_the_reference_scorer(seed: int) -> None:
    compiled = {r["question_id"]: compile_rubric(MetaRubric.model_validate(r)) for r in RUBRICS}
    questions = [
        Question.model_validate(
            {**q, "image_id": "i", "image": None, "question": "q?", "text_only_question": "q?"}
        )
        for q in QUESTIONS
    ]
    index, ids = index_checks(questions, CheckTable.of(compiled, "v"), "rubrics")
    rng = np.random.default_rng(seed)
    verdicts = rng.integers(0, 4, size=(6, index.size)).astype(np.int8)
    verdicts[5, 0] = -1  # one group lacks a verdict
    config = ScoringConfig(partial_credit=0.25, contradiction_penalty=-1.5)
    level = question_level(verdicts, index, len(questions), np.ones(6, np.bool_), config)
    assert list(level.status) == [Status.COMPLETE] * 5 + [Status.INCOMPLETE]
    assert np.isnan(level.gamut[5]).all()
    for g in range(5):
        start = 0
        for qi, q in enumerate(questions):
            got = {cid: VERDICT_ORDER[verdicts[g, start + j]] for j, cid in enumerate(ids[qi])}
            start += len(ids[qi])
            ref = score_question(compiled[q.question_id], got, config)
            assert level.gamut[g, qi] == pytest.approx(ref.gamut)


def test_expanded_percentiles_widen_the_interval_over_few_questions() -> None:
    n = np.array([5, 42, 1813, 10**7])
    lower, upper = expanded_tails(n)
    # the normal probability of sqrt(n / (n - 1)) t_{n-1}(0.975)
    expected = [100 * stats.norm.cdf(-np.sqrt(k / (k - 1)) * stats.t.ppf(0.975, k - 1)) for k in n]
    assert lower == pytest.approx(expected, rel=1e-9)
    assert lower[1] == pytest.approx(2.0476, abs=1e-4) and lower[-1] == pytest.approx(2.5, abs=1e-4)
    assert (upper == 100 - lower).all()
    rng = np.random.default_rng(3)
    values = rng.normal(size=(2, 5))
    est = estimate(resample_weights(5, 2000, 1), values)
    lo, hi = nan_percentiles(est.boot.copy(), (lower[0], upper[0]))
    assert est.lo == pytest.approx(lo) and est.hi == pytest.approx(hi)
    plain_lo, plain_hi = percentile_ci(est.boot)
    assert (est.lo < plain_lo).all() and (est.hi > plain_hi).all()
