"""Rank sensitivity, the self-preference matrix and the minimum detectable difference, by hand."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from generator.claims import judge_claims
from scoring.tables import Tables
from tests.tables.conftest import ALPHA_MM_GAMUT, ALPHA_MM_J2_GAMUT, main_project, main_verdict


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    config = main_project().write(tmp_path_factory.mktemp("sens") / "project")
    return pipeline.score(GamutProject(load_config(config)))


def test_the_family_matrix_is_a_judges_mean_minus_the_others(tables: Tables) -> None:
    m = tables["judge_family_matrix"]
    r = m[(m.setting == "multimodal") & (m.judge == "j1") & (m.model_family == "acme")].iloc[0]
    # j1 (family acme) on alpha (acme): its score minus j2's of the same model
    assert r["judge_family"] == "acme" and r["n_models"] == 1
    assert r["judge_score"] == pytest.approx(ALPHA_MM_GAMUT)
    assert r["others_score"] == pytest.approx(ALPHA_MM_J2_GAMUT)
    assert r["difference"] == pytest.approx(100 * 0.2 / 3)  # food-1: -0.05 vs -0.25
    beta = m[(m.setting == "multimodal") & (m.judge == "j2") & (m.model_family == "bolt")]
    assert beta.iloc[0]["difference"] == pytest.approx(0.0)


def test_min_detectable_difference_from_neighbours_paired_differences(tables: Tables) -> None:
    t = tables["min_detectable_difference"]
    r = t[(t.setting == "multimodal") & (t.judge == "j1") & (t.board == "all")].iloc[0]
    # beta (all missing: 0 everywhere) minus alpha (-0.05, 1/3, 0.95), one neighbouring pair
    sd = statistics.stdev([0.05, -1 / 3, -0.95])
    assert (r["n_questions"], r["n_pairs"]) == (3, 1)
    assert r["sd_paired"] == pytest.approx(sd)
    # Student's t with 2 degrees of freedom: t_0.975 = 4.3027, t_0.8 = 1.0607
    quantiles = stats.t.ppf(0.975, 2) + stats.t.ppf(0.8, 2)
    assert quantiles == pytest.approx(4.3027 + 1.0607, abs=1e-4)
    assert r["mdd"] == pytest.approx(100 * quantiles * sd / math.sqrt(3))
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert r["mdd"] > 100 * z * sd / math.sqrt(3)  # the normal quantiles understate it
    food = t[(t.setting == "multimodal") & (t.judge == "j1") & (t.board == "domain:food")]
    assert food.iloc[0]["n_questions"] == 2
    assert food.iloc[0]["sd_paired"] == pytest.approx(statistics.stdev([0.05, -1 / 3]))
    one = t[(t.board == "domain:plants")]
    assert one["mdd"].isna().all()  # one question: no variance, no figure


def test_rank_sensitivity_shows_each_judges_rank_beside_the_primarys(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
        if setting == "multimodal" and judge == "j2":  # j2 reverses the multimodal order
            return "missing" if sub == "alpha" else "meets"
        return main_verdict(sub, setting, judge, qid, cid)

    config = main_project(verdict=verdict).write(tmp_path / "p")
    rs = pipeline.score(GamutProject(load_config(config)))["rank_sensitivity"]
    mm = rs[rs.setting == "multimodal"].set_index(["submission_id", "judge"])
    assert (mm.loc[("alpha", "j1"), "rank"], mm.loc[("alpha", "j2"), "rank"]) == (1, 2)
    assert mm.loc[("alpha", "j2"), "rank_change"] == 1
    assert mm.loc[("beta", "j2"), "rank_change"] == -1
    assert (mm["max_rank_change"] == 1).all()
    to = rs[rs.setting == "text_only"]
    assert (to["rank_change"] == 0).all() and (to["max_rank_change"] == 0).all()


def test_the_new_tables_are_documented(tables: Tables) -> None:
    from scoring.tables import undocumented

    for name in ("rank_sensitivity", "judge_family_matrix", "min_detectable_difference"):
        assert undocumented(name, tables[name].columns) == []
        assert (tables.out_dir / f"{name}.csv").is_file()


def test_judges_are_compared_on_the_models_complete_under_every_judge(tmp_path: Path) -> None:
    # j1 (primary): beta, alpha, gamma; j2: alpha, beta, gamma; j3: beta, gamma, alpha. Each
    # moves alpha one place from the primary, but j2 and j3 place it two apart. Delta has no
    # verdicts under j3, so it is left out of every judge's ranks.
    levels = {
        "j1": {"beta": "meets", "alpha": "partially_meets", "gamma": "missing"},
        "j2": {"alpha": "meets", "beta": "partially_meets", "gamma": "missing"},
        "j3": {"beta": "meets", "gamma": "partially_meets", "alpha": "missing"},
    }

    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
        if sub == "delta":
            return None if judge == "j3" else "contradicts"
        return levels[judge][sub]

    project = main_project(
        models={"alpha": "acme", "beta": "bolt", "gamma": "core", "delta": "dent"},
        judges={"j1": "acme", "j2": "zeta", "j3": "yarn"},
        verdict=verdict,
    )
    t = pipeline.score(GamutProject(load_config(project.write(tmp_path / "p"))))
    rs = t["rank_sensitivity"]
    mm = rs[rs.setting == "multimodal"].set_index(["submission_id", "judge"])
    assert [mm.loc[("alpha", j), "rank"] for j in ("j1", "j2", "j3")] == [2, 1, 3]
    assert (
        mm.loc[("alpha", "j2"), "rank_change"] == -1 and mm.loc[("alpha", "j3"), "rank_change"] == 1
    )
    assert mm.loc[("alpha", "j1"), "max_rank_change"] == 2  # j2 against j3, not against j1
    assert not mm.loc[("delta", "j1"), "compared"] and pd.isna(mm.loc[("delta", "j1"), "rank"])
    assert mm.loc[("gamma", "j1"), "rank"] == 3  # among three models, delta left out
    claims = judge_claims(_Frames(rs, t["judge_tau"]), "multimodal", {"delta": "Delta"})
    assert any("left out: Delta" in c for c in claims)
    assert any("is ranked 1 by j2 and 3 by j3, 2 places apart" in c for c in claims)


class _Frames:
    """The part of the generator's score tables that ``judge_claims`` reads."""

    def __init__(self, rs: pd.DataFrame, tau: pd.DataFrame) -> None:
        self.frames = {"rank_sensitivity": rs, "judge_tau": tau}
        self.primary_judge = "j1"
