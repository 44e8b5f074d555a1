"""The score tables against hand-computed values on the tiny project of ``conftest.py``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from scoring.compiler import compile_rubric
from scoring.rubric import MetaRubric
from scoring.scorer import score_question
from scoring.tables import Tables
from tests.tables.conftest import (
    ALPHA_MM,
    ALPHA_MM_GAMUT,
    ALPHA_MM_J2_GAMUT,
    ALPHA_MM_QUESTIONS,
    BETA_TO_GAMUT,
    main_project,
    main_verdict,
)
from tests.tables.project import RUBRICS, Project

ABS = 1e-9


def row(df: pd.DataFrame, **where: object) -> pd.Series:
    """The single row matching every ``column=value``."""
    mask = pd.Series(True, index=df.index)
    for k, v in where.items():
        mask &= df[k] == v
    assert int(mask.sum()) == 1, f"{int(mask.sum())} rows match {where}"
    return df[mask].iloc[0]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    config = main_project().write(tmp_path_factory.mktemp("main") / "project")
    return pipeline.score(GamutProject(load_config(config)))


def test_question_scores_match_hand_computation_and_reference_scorer(tables: Tables) -> None:
    qs = tables["question_scores"]
    for qid, expected in ALPHA_MM_QUESTIONS.items():
        r = row(qs, submission_id="alpha", setting="multimodal", judge="j1", question_id=qid)
        assert r["gamut_raw"] == pytest.approx(expected, abs=ABS)
        rubric = MetaRubric.model_validate(next(x for x in RUBRICS if x["question_id"] == qid))
        checks = compile_rubric(rubric)
        ref = score_question(checks, {c.check_id: ALPHA_MM[(qid, c.check_id)] for c in checks})
        assert r["gamut_raw"] == pytest.approx(ref.gamut, abs=ABS)
    food1 = row(qs, submission_id="alpha", setting="multimodal", judge="j1", question_id="food-1")
    assert (food1["ac_raw"], food1["v_raw"], food1["c_raw"]) == pytest.approx((-1 / 3, 0.5, 0.0))
    assert (food1["n_meets"], food1["n_partial"], food1["n_missing"], food1["n_contradicts"]) == (
        1,
        1,
        1,
        1,
    )
    assert food1["domain"] == "food" and food1["popularity"] == "head" and food1["egocentric"]
    assert food1["response_chars"] == 10


def test_renormalised_question_without_context_tier(tables: Tables) -> None:
    qs = tables["question_scores"]
    r = row(qs, submission_id="alpha", setting="multimodal", judge="j1", question_id="food-2")
    assert math.isnan(r["c_raw"])
    assert r["gamut_raw"] == pytest.approx(1 / 3, abs=ABS)  # 0.3 / 0.9, not 0.6 * 0.5 = 0.3
    beta = row(qs, submission_id="beta", setting="text_only", judge="j1", question_id="food-2")
    assert beta["gamut_raw"] == pytest.approx(2 / 3, abs=ABS)


def test_leaderboard_scores_tiers_mix_and_metadata(tables: Tables) -> None:
    lb = tables.leaderboard
    r = row(lb, submission_id="alpha", setting="multimodal", judge="j1")
    assert r["gamut"] == pytest.approx(ALPHA_MM_GAMUT, abs=ABS)
    assert r["ac"] == pytest.approx(100 * (-1 / 3 + 0.5 + 1) / 3, abs=ABS)
    assert r["v"] == pytest.approx(100 * (0.5 + 0 + 1) / 3, abs=ABS)
    assert r["c"] == pytest.approx(100 * (0 + 0.5) / 2, abs=ABS)  # food-2 has no Context tier
    shares = [r["share_meets"], r["share_partial"], r["share_missing"], r["share_contradicts"]]
    assert shares == pytest.approx([4 / 11, 3 / 11, 3 / 11, 1 / 11])
    assert r["gamut_lo"] <= r["gamut"] <= r["gamut_hi"]
    assert r["status"] == "complete" and r["n_checks_missing"] == 0 and r["n_questions"] == 3
    assert r["n_checks"] == 11
    assert bool(r["primary"]) and r["model_family"] == "acme" and r["model_name"] == "Alpha"
    assert r["date"] == "2026-01-01" and r["mean_response_chars"] == 10
    assert r["production_decoding"] == "greedy"
    assert not r["production_tools"] and not r["production_web_access"]
    assert "contact" not in lb.columns  # a person's address is not published
    assert r["text_only"] == pytest.approx(100.0)
    assert r["gap"] == pytest.approx(100.0 - ALPHA_MM_GAMUT, abs=ABS)
    beta = row(lb, submission_id="beta", setting="text_only", judge="j1")
    assert beta["gamut"] == pytest.approx(BETA_TO_GAMUT, abs=ABS)
    assert set(lb["status"]) == {"complete"} and len(lb) == 8
    assert not row(lb, submission_id="alpha", setting="multimodal", judge="j2")["primary"]


def test_ranks_per_setting_and_judge(tables: Tables) -> None:
    lb = tables.leaderboard
    assert row(lb, submission_id="alpha", setting="multimodal", judge="j2")["rank"] == 1
    assert row(lb, submission_id="beta", setting="multimodal", judge="j2")["rank"] == 2
    assert row(lb, submission_id="alpha", setting="text_only", judge="j1")["rank"] == 1


def test_breakdowns(tables: Tables) -> None:
    food = row(
        tables["by_domain"], submission_id="alpha", setting="multimodal", judge="j1", domain="food"
    )
    assert food["n_questions"] == 2
    assert food["gamut"] == pytest.approx(100 * (-0.05 + 1 / 3) / 2, abs=ABS)
    assert food["c"] == pytest.approx(0.0)  # only food-1 has a Context tier
    tail = row(
        tables["by_popularity"],
        submission_id="alpha",
        setting="multimodal",
        judge="j1",
        popularity="tail",
    )
    assert tail["gamut"] == pytest.approx(100 / 3, abs=ABS)
    assert tail["gamut_lo"] == pytest.approx(tail["gamut"])  # one question: no spread
    ego = tables["by_egocentric"]
    assert set(ego["egocentric"]) == {True, False}
    kinds = tables["by_kind"]
    member = row(kinds, submission_id="alpha", setting="multimodal", judge="j1", kind="member")
    assert bool(member["secondary"]) and member["n_checks"] == 3
    assert member["score"] == pytest.approx(100 * 1.5 / 3)
    fact = row(kinds, submission_id="alpha", setting="multimodal", judge="j1", kind="fact")
    # 7 facts: meets 2, partial 2, missing 2, contradicts 1 -> (2 + 1 - 2) / (6 + 2) = 1/8
    assert fact["n_checks"] == 7 and fact["score"] == pytest.approx(12.5)


def test_modality(tables: Tables) -> None:
    m = row(tables["modality"], submission_id="beta", judge="j1")
    assert m["multimodal"] == pytest.approx(0.0) and m["text_only"] == pytest.approx(BETA_TO_GAMUT)
    assert m["gap"] == pytest.approx(BETA_TO_GAMUT) and m["gap_lo"] <= m["gap"] <= m["gap_hi"]
    s = row(tables["modality_summary"], judge="j1")
    gaps = [100 - ALPHA_MM_GAMUT, BETA_TO_GAMUT]
    assert s["n_models"] == 2 and s["mean_gap"] == pytest.approx(sum(gaps) / 2)
    assert s["min_gap"] == pytest.approx(min(gaps)) and s["kendall_tau"] == pytest.approx(1.0)


def test_judge_tables(tables: Tables) -> None:
    diff = ALPHA_MM_J2_GAMUT - ALPHA_MM_GAMUT
    tau = row(tables["judge_tau"], setting="multimodal", judge_a="j1", judge_b="j2")
    assert tau["tau_b"] == pytest.approx(1.0) and tau["max_diff_submission"] == "alpha"
    assert tau["max_abs_diff"] == pytest.approx(abs(diff))
    len_ = row(tables["judge_leniency"], setting="multimodal", judge="j2")
    assert len_["offset"] == pytest.approx(diff / 2)
    assert len_["offset_lo"] <= len_["offset"] <= len_["offset_hi"]
    assert row(tables["judge_leniency"], setting="multimodal", judge="j1")["offset"] == 0
    scores = tables["judge_scores"]
    assert len(scores) == 8 and set(scores.columns) >= {"gamut", "gamut_lo", "gamut_hi", "rank"}


def test_self_preference_detects_planted_family_bias(tables: Tables) -> None:
    sp = tables["judge_self_preference"]
    j1 = row(sp, setting="multimodal", judge="j1")
    assert j1["family"] == "acme" and j1["n_own"] == 1 and j1["n_other"] == 1
    assert j1["own_score"] == pytest.approx(ALPHA_MM_GAMUT)
    assert j1["others_score_of_own"] == pytest.approx(ALPHA_MM_J2_GAMUT)
    assert j1["other_families_diff"] == pytest.approx(0.0)
    assert j1["self_preference"] == pytest.approx(ALPHA_MM_GAMUT - ALPHA_MM_J2_GAMUT)
    assert j1["self_preference"] > 5
    assert row(sp, setting="text_only", judge="j1")["self_preference"] == pytest.approx(0.0)
    j2 = row(sp, setting="multimodal", judge="j2")
    assert j2["n_own"] == 0 and math.isnan(j2["self_preference"])
    assert math.isnan(j1["self_preference_primary"])  # the primary judge: not against itself
    assert j1["self_preference_lo"] <= j1["self_preference"] <= j1["self_preference_hi"]


def test_kappa_on_the_shared_rows(tables: Tables) -> None:
    k = row(tables["judge_kappa"], setting="multimodal", judge_a="j1", judge_b="j2")
    # 22 shared checks, one disagreement (meets vs missing): j1 M4 P3 S14 C1, j2 M3 P3 S15 C1.
    chance = (4 * 3 + 3 * 3 + 14 * 15 + 1 * 1) / 22**2
    assert k["n_checks"] == 22 and k["agreement"] == pytest.approx(21 / 22)
    assert k["kappa"] == pytest.approx((21 / 22 - chance) / (1 - chance))
    # the one disagreement is drawn or not: the resamples' kappa runs up to 1
    assert k["kappa_lo"] < k["kappa"] < k["kappa_hi"] == pytest.approx(1.0)
    assert k["agreement_lo"] < k["agreement"] < k["agreement_hi"] == pytest.approx(1.0)
    assert row(tables["judge_kappa"], setting="text_only", judge_a="j1", judge_b="j2")[
        "kappa"
    ] == pytest.approx(1.0)


def test_incomplete_submission_is_reported_and_never_ranked(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
        if (sub, setting, judge, qid, cid) == ("beta", "text_only", "j2", "food-2", "I2"):
            return None
        return main_verdict(sub, setting, judge, qid, cid)

    t = pipeline.score(GamutProject(load_config(main_project(verdict=verdict).write(tmp_path))))
    r = row(t.leaderboard, submission_id="beta", setting="text_only", judge="j2")
    assert r["status"] == "incomplete" and r["n_checks_missing"] == 1
    assert math.isnan(r["gamut"]) and pd.isna(r["rank"]) and pd.isna(r["tie_group"])
    inc = row(t["incomplete"], submission_id="beta", setting="text_only", judge="j2")
    assert (inc["n_expected"], inc["n_judged"], inc["n_missing"]) == (11, 10, 1)
    assert inc["n_questions_affected"] == 1 and len(t["incomplete"]) == 1
    qs = t["question_scores"]
    assert not (
        (qs["submission_id"] == "beta") & (qs["setting"] == "text_only") & (qs["judge"] == "j2")
    ).any()
    assert row(t.leaderboard, submission_id="alpha", setting="text_only", judge="j2")["rank"] == 1
    assert len(t["modality"]) == 3 and len(t["judge_scores"]) == 7
    tau = row(t["judge_tau"], setting="text_only", judge_a="j1", judge_b="j2")
    assert tau["n_models"] == 1 and math.isnan(tau["tau_b"])
    records = json.loads((t.out_dir / "leaderboard.json").read_text())
    rec = next(
        x
        for x in records
        if (x["submission_id"], x["judge"], x["setting"]) == ("beta", "j2", "text_only")
    )
    assert rec["gamut"] is None and rec["rank"] is None and rec["status"] == "incomplete"
    # the complete rows are unchanged
    assert row(t.leaderboard, submission_id="beta", setting="text_only", judge="j1")[
        "gamut"
    ] == pytest.approx(BETA_TO_GAMUT)


def test_tie_groups_and_rank_ranges(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str:
        if sub == "gamma":
            return "contradicts"
        if sub == "beta" and (qid, cid) == ("food-1", "I4"):
            return "missing"  # one Context check: beta is 0.1 below alpha on one question only
        return "meets"

    project = Project(
        {"alpha": "a", "beta": "b", "gamma": "c"},
        {"j1": "a"},
        verdict,
        settings={"gamma": ("multimodal",)},
        resamples=500,
    )
    t = pipeline.score(GamutProject(load_config(project.write(tmp_path))))
    lb = t.leaderboard[t.leaderboard["setting"] == "multimodal"].set_index("submission_id")
    assert lb.loc["beta", "gamut"] == pytest.approx(100 * (0.9 + 1 + 1) / 3)
    assert list(lb.loc[["alpha", "beta", "gamma"], "rank"]) == [1, 2, 3]
    # alpha and beta differ on one question only: not significant; gamma is below both
    assert list(lb.loc[["alpha", "beta", "gamma"], "tie_group"]) == [1, 1, 3]
    assert (lb.loc["alpha", "rank_lo"], lb.loc["alpha", "rank_hi"]) == (1, 1)
    assert (lb.loc["beta", "rank_lo"], lb.loc["beta", "rank_hi"]) == (1, 2)
    assert (lb.loc["gamma", "rank_lo"], lb.loc["gamma", "rank_hi"]) == (3, 3)
    assert "gamma" not in set(t["modality"]["submission_id"])
    assert not (
        (t.leaderboard["submission_id"] == "gamma") & (t.leaderboard["setting"] == "text_only")
    ).any()


def test_files_provenance_and_no_rubric_text(tables: Tables) -> None:
    out = tables.out_dir
    for name in ("leaderboard", "by_domain", "modality", "judge_tau", "judge_kappa"):
        for ext in ("parquet", "csv", "json"):
            assert (out / f"{name}.{ext}").is_file()
    assert (out / "question_scores.parquet").is_file()
    prov = tables.provenance
    assert prov["primary_judge"] == "j1" and prov["rubric_version"].startswith("sha256:")
    assert prov["scoring"]["partial_credit"] == 0.5 and prov["judges"]["j2"]["family"] == "zeta"
    meta = pq.read_schema(out / "leaderboard.parquet").metadata
    assert b"gamut.provenance" in meta
    back = pd.read_parquet(out / "leaderboard.parquet")
    assert list(back.columns) == list(tables.leaderboard.columns)
    texts = [i.get("text") or i.get("topic") for r in RUBRICS for i in r["items"]]
    texts += ["timber", "shade"]
    for f in tables.files:
        data = f.read_bytes()
        assert not any(t.encode() in data for t in texts if t), f


def test_the_gap_is_correlated_with_the_mean_of_the_two_scores() -> None:
    from types import SimpleNamespace

    from scoring.tables.tables import modality_summary

    mm, to = np.array([10.0, 20.0, 30.0, 40.0]), np.array([15.0, 28.0, 33.0, 41.0])
    table = pd.DataFrame({"judge": "j", "multimodal": mm, "text_only": to, "gap": to - mm})
    sc = SimpleNamespace(inputs=SimpleNamespace(judges=("j",)), primary=0)
    r = modality_summary(sc, table).iloc[0]  # type: ignore[arg-type]
    assert r["corr_gap_mean"] == pytest.approx(np.corrcoef(to - mm, (mm + to) / 2)[0, 1])
    assert r["corr_gap_mean"] != pytest.approx(np.corrcoef(to - mm, mm)[0, 1])
