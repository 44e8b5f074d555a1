"""Pairwise model comparison: the arithmetic against loops, and the table against the leaderboard
built from the same resamples."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from scoring.tables.bootstrap import ALPHA, Ask, holm, pair_pvalues, percentile_ci, rank_many
from scoring.tables.columns import TABLES
from scoring.tables.pairwise import paired_differences, question_wins
from tests.tables.project import Project


def test_paired_differences_match_a_loop_over_pairs() -> None:
    rng = np.random.default_rng(5)
    boot = rng.normal(size=(300, 4)) + np.array([0.0, 0.1, 3.0, 3.05])
    value = boot.mean(axis=0)
    d = paired_differences(value, boot)
    for a in range(4):
        for b in range(4):
            lo, hi = percentile_ci(boot[:, [a]] - boot[:, [b]])
            assert d.diff[a, b] == pytest.approx(value[a] - value[b])
            assert d.lo[a, b] == pytest.approx(lo[0]) and d.hi[a, b] == pytest.approx(hi[0])
    assert (d.diff == -d.diff.T).all()
    assert d.hi[0, 2] < 0 < d.hi[2, 3] and d.lo[2, 3] < 0  # far apart, then close


def test_holm_adjusts_the_pairs_p_values_step_down() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])  # 4p, 3p (cummax), 2p, 1p
    assert holm(np.array([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def test_pair_p_values_are_the_t_test_on_the_bootstrap_standard_error() -> None:
    rng = np.random.default_rng(8)
    boot = rng.normal(size=(500, 3)) * 2 + np.array([10.0, 9.5, 4.0])
    value = boot.mean(axis=0)
    p = pair_pvalues(value, boot, n_questions=30)
    se = np.std(boot[:, 0] - boot[:, 2], ddof=1)
    assert p[0, 2] == pytest.approx(2 * stats.t.sf(abs(value[0] - value[2]) / se, df=29))
    assert (p == p.T).all() and (np.diag(p) == 1).all()


finite = st.floats(-50, 50, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    centres=st.lists(finite, min_size=2, max_size=7),
    spread=st.floats(0.1, 20.0),
    seed=st.integers(0, 2**16),
    n_questions=st.integers(2, 200),
)
def test_no_tie_group_holds_two_significantly_different_models(
    centres: list[float], spread: float, seed: int, n_questions: int
) -> None:
    rng = np.random.default_rng(seed)
    n = len(centres)
    scales = rng.uniform(0.2, 3.0, size=n) * spread  # unequal spreads: pairwise tests disagree
    common = rng.normal(size=(200, 1)) * rng.uniform(0, 3)
    boot = np.array(centres) + common + rng.normal(size=(200, n)) * scales
    value = np.array(centres)
    (r,) = rank_many([Ask(value, boot, n_questions)])
    for a, b in itertools.combinations(range(n), 2):
        if r.p_adjusted[a, b] < ALPHA:
            assert r.tie_group[a] != r.tie_group[b]
            hi, lo = (a, b) if value[a] > value[b] else (b, a)
            assert r.tie_group[hi] < r.tie_group[lo]
    better = (value[None, :] > value[:, None]) & (r.p_adjusted < ALPHA)
    assert (r.tie_group == 1 + better.sum(axis=1)).all()


def test_question_wins_counts_each_side_and_leaves_out_nan() -> None:
    scores = np.array(
        [
            [0.5, 0.2, 1.0, np.nan],
            [0.5, 0.4, -1.0, 0.3],
            [0.1, 0.1, 0.1, 0.1],
        ]
    )
    higher, equal = question_wins(scores)
    assert (higher[0, 1], higher[1, 0], equal[0, 1]) == (1, 1, 1)
    assert (higher[1, 2], higher[2, 1], equal[1, 2]) == (3, 1, 0)
    assert (higher[0, 2], higher[2, 0], equal[0, 2]) == (3, 0, 0)
    assert (np.diag(higher) == 0).all()


def test_pairwise_table_matches_the_leaderboard(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str:
        if sub == "gamma":
            return "contradicts"
        if sub == "beta" and (qid, cid) == ("food-1", "I4"):
            return "missing"
        return "meets"

    project = Project(
        {"alpha": "a", "beta": "b", "gamma": "c"}, {"j1": "a"}, verdict, resamples=500
    )
    t = pipeline.score(GamutProject(load_config(project.write(tmp_path))))
    pw = t["pairwise"]
    assert list(pw.columns) == list(TABLES["pairwise"])
    mm = pw[(pw["setting"] == "multimodal") & (pw["judge"] == "j1")]
    assert len(mm) == 3 * 2
    lb = t.leaderboard[t.leaderboard["setting"] == "multimodal"].set_index("submission_id")
    for r in mm.itertuples():
        a, b = lb.loc[r.submission_a], lb.loc[r.submission_b]
        assert r.diff == pytest.approx(a["gamut"] - b["gamut"])
        assert r.n_a_higher + r.n_b_higher + r.n_equal == r.n_questions == a["n_questions"]
        same_group = lb.loc[r.submission_a, "tie_group"] == lb.loc[r.submission_b, "tie_group"]
        assert bool(r.significant) == (float(r.p_adjusted) < ALPHA)
        if r.significant:
            assert not same_group
    ab = mm[(mm["submission_a"] == "alpha") & (mm["submission_b"] == "beta")].iloc[0]
    # beta misses one Context check on one question: alpha higher there, equal elsewhere
    assert (ab["n_a_higher"], ab["n_b_higher"]) == (1, 0) and not ab["significant"]
    ag = mm[(mm["submission_a"] == "alpha") & (mm["submission_b"] == "gamma")].iloc[0]
    assert ag["significant"] and ag["diff_lo"] > 0 and ag["n_b_higher"] == 0


def test_domain_breakdown_ranks_within_the_domain(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str:
        return "contradicts" if sub == "gamma" else "meets"

    project = Project({"alpha": "a", "beta": "b", "gamma": "c"}, {"j1": "a"}, verdict)
    t = pipeline.score(GamutProject(load_config(project.write(tmp_path))))
    bd = t["by_domain"]
    one = bd[(bd["setting"] == "multimodal") & (bd["domain"] == bd["domain"].iloc[0])]
    one = one.set_index("submission_id")
    assert one.loc["gamma", "rank"] == 3 and one.loc["alpha", "rank"] == 1
    assert one.loc["alpha", "tie_group"] == one.loc["beta", "tie_group"] == 1
    assert one.loc["gamma", "tie_group"] == 3  # 1 + the two models significantly better
    n = int(one.loc["alpha", "n_questions"])
    assert one.loc["alpha", "ci_coverage_ceiling"] == pytest.approx(1 - 2 ** (1 - n))
