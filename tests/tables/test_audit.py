"""Judge against humans, humans against each other and the PPI-corrected score, by hand."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import ppi_py
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from scoring.tables import Tables
from scoring.tables.audit import agreement, ppi_mean
from tests.tables.conftest import ALPHA_MM, ALPHA_MM_QUESTIONS, main_project
from tests.tables.project import CHECKS

ABS = 1e-9


def label(qid: str, cid: str, verdict: str, annotator: str = "a1", role: str = "label") -> str:
    return json.dumps(
        {
            "submission_id": "alpha",
            "setting": "multimodal",
            "question_id": qid,
            "check_id": cid,
            "annotator": annotator,
            "verdict": verdict,
            "role": role,
        }
    )


# Humans on alpha's multimodal responses. food-1: as the judge, except I2, which the judge called
# contradicts: a1 says meets, a2 contradicts, a3 adjudicates meets. So food-1 scores AC 1, V 0.5,
# C 0: 0.6 + 0.15 = 0.75 for humans (the judge: -0.05). food-2: as the judge (1/3). plant-3: a1
# as the judge, a2 only on I1 (missing): a tie without adjudication, so plant-3 is not audited.
HUMAN = {**ALPHA_MM, ("food-1", "I2"): "meets"}
LINES = [
    *(label(q, c, HUMAN[(q, c)]) for q in ("food-1", "food-2", "plant-3") for c in CHECKS[q]),
    label("food-1", "I2", "contradicts", "a2"),
    label("food-1", "I2", "meets", "a3", "adjudication"),
    label("plant-3", "I1", "missing", "a2"),
]
S_J = [ALPHA_MM_QUESTIONS[q] for q in ("food-1", "food-2", "plant-3")]  # -0.05, 1/3, 0.95
RECT = [0.75 - -0.05, 1 / 3 - 1 / 3]  # human minus judge on food-1 and food-2: 0.8, 0
# theta = mean(S_J) + mean(RECT) = 0.411111 + 0.4 = 0.811111
# var(S_J) = (0.461111^2 + 0.077778^2 + 0.538889^2) / 2 = 0.254537
# var(RECT) = (0.4^2 + 0.4^2) / 1 = 0.32; cov(S_J audited, RECT) = 2 (-0.191667 x 0.4) = -0.153333
# one stratum: var(S_J) / N + var(RECT) / n + 2 cov / N = 0.0848457 + 0.16 - 0.1022222
#   half-width = 1.96 sqrt(0.1426235) = 0.7402042
# by domain (food: both audited, plants: none, its weight shared out to food): the phase-two
#   term vanishes (every food question audited) and var = (0.254537 + 0.32 - 0.306667) / 3
#   half-width = 1.96 sqrt(0.0892901) = 0.5856765
THETA = 0.8111111111
HALF = 0.7402042
HALF_BY_DOMAIN = 0.5856765


def audited_project(root: Path, lines: list[str]) -> Path:
    config = main_project().write(root)
    text = config.read_text().replace("[benchmark]\n", '[benchmark]\naudit = "audit"\n', 1)
    config.write_text(text)
    (root / "audit").mkdir()
    (root / "audit" / "team.jsonl").write_text("".join(x + "\n" for x in lines))
    return config


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    config = audited_project(tmp_path_factory.mktemp("audit") / "project", LINES)
    return pipeline.score(GamutProject(load_config(config)))


def test_ppi_mean_matches_the_hand_computation() -> None:
    human, audited = np.array([0.75, 1 / 3, np.nan]), np.array([True, True, False])
    est = ppi_mean(np.array(S_J), human, audited)
    assert est.theta == pytest.approx(THETA, abs=1e-9)
    assert est.hi - est.theta == pytest.approx(HALF, abs=1e-6)
    assert est.theta - est.lo == pytest.approx(HALF, abs=1e-6)
    assert est.n_audited == 2
    by_domain = ppi_mean(np.array(S_J), human, audited, np.array([0, 0, 1]))
    assert by_domain.theta == pytest.approx(THETA, abs=1e-9)
    assert by_domain.hi - by_domain.theta == pytest.approx(HALF_BY_DOMAIN, abs=1e-6)


def test_leaderboard_carries_the_corrected_score_of_the_audited_row(tables: Tables) -> None:
    lb = tables.leaderboard
    r = lb[(lb.submission_id == "alpha") & (lb.setting == "multimodal") & (lb.judge == "j1")]
    r = r.iloc[0]
    assert r["audited_questions"] == 2
    assert r["gamut_ppi"] == pytest.approx(100 * THETA, abs=1e-6)
    # the draw's strata are the domains: food-1 and food-2 (food), plant-3 (plants)
    assert r["gamut_ppi_lo"] == pytest.approx(100 * (THETA - HALF_BY_DOMAIN), abs=1e-4)
    assert r["gamut_ppi_hi"] == pytest.approx(100 * (THETA + HALF_BY_DOMAIN), abs=1e-4)
    assert r["rank_ppi"] == 1 and r["tie_group_ppi"] == 1
    # judge j2 called food-1 I1 missing: S_j(food-1) = -0.25, so the correction is larger
    r2 = lb[(lb.submission_id == "alpha") & (lb.setting == "multimodal") & (lb.judge == "j2")]
    j2 = [-0.25, 1 / 3, 0.95]
    expected = statistics.fmean(j2) + statistics.fmean([0.75 + 0.25, 0.0])
    assert r2.iloc[0]["gamut_ppi"] == pytest.approx(100 * expected, abs=1e-6)
    # rows without labels: no correction, and the count says why
    rest = lb[~((lb.submission_id == "alpha") & (lb.setting == "multimodal"))]
    assert (rest["audited_questions"] == 0).all()
    assert rest["gamut_ppi"].isna().all() and rest["rank_ppi"].isna().all()


def test_judge_human_per_kind_and_all_by_hand(tables: Tables) -> None:
    jh = tables["judge_human"]
    r = jh[(jh.setting == "multimodal") & (jh.judge == "j1") & (jh.kind == "all")].iloc[0]
    # 10 cells with a final human verdict (plant-3 I1 has none); the judge differs on food-1 I2
    assert r["n_checks"] == 10
    assert r["agreement"] == pytest.approx(0.9)
    assert r["judge_contradicts_human_meets"] == 1
    assert r["judge_meets_human_meets"] == 3
    # judge rows: 3 meets, 3 partial, 3 missing, 1 contradicts; humans: 4, 3, 3, 0
    assert r["kappa"] == pytest.approx((0.9 - 0.3) / (1 - 0.3))
    assert r["macro_f1"] == pytest.approx((6 / 7 + 1 + 1 + 0) / 4)
    assert r["leniency"] == pytest.approx((-2 - 1) / 10)  # mu = -2 against meets = 1
    kinds = set(jh[(jh.judge == "j1") & (jh.setting == "multimodal")]["kind"])
    assert kinds == {"all", "fact", "baseline", "member"}
    assert not (jh.setting == "text_only").any()  # no text-only labels


def test_human_human_counts_pairs_of_annotators(tables: Tables) -> None:
    hh = tables["human_human"]
    r = hh[(hh.setting == "multimodal") & (hh.kind == "all")].iloc[0]
    # pairs: food-1 I2 (a1 meets, a2 contradicts), plant-3 I1 (a1 meets, a2 missing)
    assert r["n_checks"] == 2
    assert r["agreement"] == 0.0
    assert r["first_meets_second_contradicts"] == 1
    assert r["first_meets_second_missing"] == 1
    assert r["leniency"] == pytest.approx(((1 - -2) + (1 - 0)) / 2)


def test_the_audit_tables_are_written_with_every_column_documented(tables: Tables) -> None:
    from scoring.tables import undocumented

    for name in ("judge_human", "human_human", "leaderboard"):
        assert (tables.out_dir / f"{name}.parquet").is_file()
        assert undocumented(name, tables[name].columns) == []


def test_a_project_without_audit_gets_empty_columns_and_tables(tmp_path: Path) -> None:
    config = main_project().write(tmp_path / "p")
    t = pipeline.score(GamutProject(load_config(config)))
    assert t.leaderboard["gamut_ppi"].isna().all()
    assert (t.leaderboard["audited_questions"] == 0).all()
    assert t["judge_human"].empty and t["human_human"].empty
    assert list(t["judge_human"].columns)[:4] == ["setting", "judge", "kind", "n_checks"]


def test_bad_labels_stop_the_scoring_with_every_problem(tmp_path: Path) -> None:
    from scoring.errors import ProblemsError

    bad = [
        label("food-1", "I9", "meets"),
        label("food-9", "I1", "meets"),
        label("food-1", "I1", "x"),
    ]
    config = audited_project(tmp_path / "p", bad)
    with pytest.raises(ProblemsError) as err:
        pipeline.score(GamutProject(load_config(config)))
    assert [p.line for p in err.value.problems] == [1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1, 1), min_size=2, max_size=40),
    st.data(),
)
def test_ppi_mean_holds_against_ppi_python(judge: list[float], data: st.DataObject) -> None:
    """ppi-python 0.2.3 (``ppi_py.ppi_mean_ci``, lam=1, alpha=0.05): the same point estimate; its
    variance var0(judge) / N + var0(d) / n (population variances, the unlabelled set taken as
    independent of the labelled) differs from ours by the ddof and by 2 cov(judge, d) / N, the
    audited questions' place among the N."""
    n = len(judge)
    audited = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    human = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    s_j = np.array(judge)
    est = ppi_mean(s_j, human, audited)
    if audited.sum() < 2:
        assert math.isnan(est.theta) and math.isnan(est.lo) and math.isnan(est.hi)
        return
    y, yhat = human[audited], s_j[audited]
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, s_j, alpha=0.05, lam=1)
    assert est.theta == pytest.approx(ppi_py.ppi_mean_pointestimate(y, yhat, s_j, lam=1)[0])
    assert est.theta == pytest.approx((lo[0] + hi[0]) / 2, abs=1e-9)
    z = stats.norm.ppf(0.975)
    d, n_a = y - yhat, int(audited.sum())
    ours = ((hi[0] - lo[0]) / (2 * z)) ** 2
    ours += (s_j.var(ddof=1) - s_j.var()) / n + (d.var(ddof=1) - d.var()) / n_a
    ours += 2 * np.cov(yhat, d)[0, 1] / n
    # ours = s2_h / N + (1 - n / N) var(d) / n, with s2_h = var(judge) + var(d) + 2 cov, which
    # a tiny sample can make negative: then it counts as 0
    s2_h = s_j.var(ddof=1) + d.var(ddof=1) + 2 * np.cov(yhat, d)[0, 1]
    ours -= min(s2_h, 0.0) / n
    assert ((est.hi - est.lo) / (2 * 1.96)) ** 2 == pytest.approx(ours, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**16), st.integers(2, 4), st.integers(8, 40))
def test_stratified_ppi_mean_holds_against_the_weighted_form_and_cochran(
    seed: int, n_strata: int, n: int
) -> None:
    """The point estimate is ppi-python's weighted form (w = N_h / n_h); the variance is
    Cochran's (1977) eq. 12.4 for double sampling for stratification, computed here by loops."""
    rng = np.random.default_rng(seed)
    strata = rng.integers(0, n_strata, size=n)
    strata[:n_strata] = np.arange(n_strata)  # every stratum present
    s_j = rng.uniform(-1, 1, size=n)
    human = np.clip(s_j + rng.normal(0.1, 0.3, size=n), -1, 1)
    audited = np.zeros(n, bool)
    for h in range(n_strata):  # two per stratum where it can, one otherwise
        members = np.flatnonzero(strata == h)
        audited[rng.choice(members, size=min(2, members.size), replace=False)] = True
    est = ppi_mean(s_j, human, audited, strata)
    big = {h: int((strata == h).sum()) for h in range(n_strata)}
    small = {h: int((audited & (strata == h)).sum()) for h in range(n_strata)}
    w = np.array([big[h] / small[h] for h in strata[audited]])
    y, yhat = human[audited], s_j[audited]
    point = ppi_py.ppi_mean_pointestimate(y, yhat, s_j, lam=1, w=w)[0]
    assert est.theta == pytest.approx(point, abs=1e-12)
    d = y - yhat
    p = w / w.sum()
    mean_d = float(p @ d)
    k = audited.sum() / (audited.sum() - 1)
    var_d = k * float(p @ (d - mean_d) ** 2)
    cov = k * float(p @ ((d - mean_d) * (yhat - p @ yhat)))
    s2 = s_j.var(ddof=1) + var_d + 2 * cov  # the human score's variance over the population
    within = {}
    for h in range(n_strata):
        dh = d[strata[audited] == h]
        within[h] = dh.var(ddof=1) if dh.size > 1 else None
    pooled_num = sum(((d[strata[audited] == h] - d[strata[audited] == h].mean()) ** 2).sum()
                     for h in range(n_strata) if within[h] is not None)  # fmt: skip
    pooled_den = sum(small[h] - 1 for h in range(n_strata) if within[h] is not None)
    variance = max(s2, 0.0) / n
    for h in range(n_strata):
        s2_h = within[h] if within[h] is not None else pooled_num / pooled_den
        w_h, nu_h = big[h] / n, small[h] / big[h]
        variance += w_h * s2_h * (1 / nu_h - 1) / n  # Cochran 12.4, second term
    assert est.hi - est.theta == pytest.approx(1.96 * math.sqrt(variance), abs=1e-9)


def test_agreement_of_a_perfect_and_of_an_empty_table() -> None:
    perfect = np.diag([5, 0, 2, 1]).astype(np.int64)
    values = np.array([1.0, 0.5, 0.0, -2.0])
    a = agreement(perfect, values)
    assert (a["agreement"], a["kappa"], a["macro_f1"], a["leniency"]) == (1.0, 1.0, 1.0, 0.0)
    empty = agreement(np.zeros((4, 4), np.int64), values)
    assert empty["n_checks"] == 0 and math.isnan(empty["kappa"]) and math.isnan(empty["macro_f1"])


def test_questions_with_incomplete_human_verdicts_are_named(tables: Tables) -> None:
    t = tables["audit_incomplete"]
    # plant-3: I1 is a tie between a1 and a2 with no adjudication, the other checks are final
    assert t.to_dict(orient="records") == [
        {
            "setting": "multimodal",
            "submission_id": "alpha",
            "question_id": "plant-3",
            "n_checks": len(CHECKS["plant-3"]),
            "n_final": len(CHECKS["plant-3"]) - 1,
        }
    ]


def test_linear_weighted_kappa_counts_near_misses_as_partial_agreement() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, 200)
    b = np.clip(a + rng.choice([-1, 0, 0, 0, 1], 200), 0, 3)
    confusion = np.zeros((4, 4), np.int64)
    np.add.at(confusion, (a, b), 1)
    figures = agreement(confusion, np.array([1.0, 0.5, 0.0, -2.0]))
    assert figures["kappa_linear"] == pytest.approx(cohen_kappa_score(a, b, weights="linear"))
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert figures["kappa_linear"] > figures["kappa"]  # the misses are all near ones


def test_the_judge_is_held_against_each_annotator_like_the_annotators_against_each_other(
    tables: Tables,
) -> None:
    t = tables["judge_annotator"]
    r = t[(t.setting == "multimodal") & (t.judge == "j1") & (t.kind == "all")].iloc[0]
    # a1 labels all 11 checks, agreeing with j1 except food-1 I2 (meets against contradicts);
    # a2 labels food-1 I2 (contradicts, as j1) and plant-3 I1 (missing, where j1 said meets);
    # a3's adjudication is no annotator's label and is left out
    assert ALPHA_MM[("plant-3", "I1")] == "meets" and ALPHA_MM[("food-1", "I2")] == "contradicts"
    assert r["n_checks"] == 13
    assert r["agreement"] == pytest.approx(11 / 13)
    final = tables["judge_human"]
    f = final[(final.setting == "multimodal") & (final.judge == "j1") & (final.kind == "all")]
    assert f.iloc[0]["n_checks"] == 11 - 1  # against the final verdicts: plant-3 I1 has none


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(2, 12))
def test_agreement_figures_hold_against_sklearn(seed: int, n_items: int) -> None:
    """Raw agreement, both kappas and macro-F1 of one table, as scikit-learn computes them from
    the labels (macro-F1 over the verdicts either labelling uses)."""
    from sklearn.metrics import cohen_kappa_score, f1_score

    from scoring.tables.judges import confusion_figures

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n_items)
    b = np.where(rng.random(n_items) < 0.6, a, rng.integers(0, 4, n_items))
    confusion = np.zeros((4, 4), np.int64)
    np.add.at(confusion, (a, b), 1)
    got = {k: float(v) for k, v in confusion_figures(confusion).items()}
    assert got["agreement"] == pytest.approx(float((a == b).mean()))
    used = sorted(set(a) | set(b))
    assert got["macro_f1"] == pytest.approx(f1_score(a, b, labels=used, average="macro"))
    if len(used) > 1:
        assert got["kappa"] == pytest.approx(cohen_kappa_score(a, b))
        assert got["kappa_linear"] == pytest.approx(
            cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear")
        )


def test_agreement_intervals_resample_questions_with_all_their_checks() -> None:
    """The interval of the total of two tables is the expanded percentile interval of its kappa
    recomputed, resample by resample, from the checks of the drawn questions (a loop over
    resamples here); a table under the floor has none."""
    from scoring.tables.bootstrap import percentile_ci, resample_weights
    from scoring.tables.judges import agreement_intervals, cohen_kappa, with_total

    rng = np.random.default_rng(3)
    n_q, n_b = 15, 300
    per_q = np.zeros((n_q, 2, 4, 4), np.int64)
    for q in range(n_q):  # 3 to 8 checks per question, the raters agreeing 70% of the time
        for t in range(2):
            n = rng.integers(3, 9)
            a = rng.integers(0, 4, n)
            b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 4, n))
            np.add.at(per_q[q, t], (a, b), 1)
    weights = resample_weights(n_q, n_b, 11)
    got = agreement_intervals(with_total(per_q), weights, np.array([1, 1, 10**6]))
    by_hand = []
    for row in weights:
        drawn = np.repeat(np.arange(n_q), row.astype(int))
        by_hand.append(cohen_kappa(per_q[drawn].sum(axis=(0, 1)))[0])
    lo, hi = percentile_ci(np.array(by_hand)[:, None], n=n_q)
    assert got["kappa"][0][0] == pytest.approx(lo[0]) and got["kappa"][1][0] == pytest.approx(hi[0])
    assert not np.isnan(got["macro_f1"][0][1])  # the first table (after the total): no floor
    assert all(np.isnan(got[f][e][2]) for f in got for e in (0, 1))  # the second: under it


def test_the_agreement_tables_carry_intervals_around_their_figures(tables: Tables) -> None:
    for name in ("judge_human", "judge_annotator", "human_human"):
        t = tables[name]
        for figure in ("agreement", "kappa", "kappa_linear", "macro_f1"):
            defined = t[t[f"{figure}_lo"].notna()]
            assert len(defined), (name, figure)
            assert (defined[f"{figure}_lo"] <= defined[figure] + ABS).all(), (name, figure)
            assert (defined[figure] <= defined[f"{figure}_hi"] + ABS).all(), (name, figure)
