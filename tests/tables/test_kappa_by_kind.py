"""Judge agreement per check kind (``judge_kappa_by_kind``) against hand-computed values and an
independent reference implementation of Cohen's kappa, on projects whose kinds are known to
differ in agreement."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from scoring.compiler import compile_rubric
from scoring.rubric import MetaRubric
from scoring.tables import MIN_KIND_CHECKS, Tables
from scoring.tables.columns import TABLES
from tests.tables.conftest import main_project
from tests.tables.project import RUBRICS, SETTINGS, Project
from tests.tables.test_tables import row

VERDICTS = ("meets", "partially_meets", "missing", "contradicts")
#: (question, check) -> (kind, secondary), from the compiler.
KIND = {
    (r["question_id"], c.check_id): (c.kind.value, c.secondary)
    for r in RUBRICS
    for c in compile_rubric(MetaRubric.model_validate(r))
}
#: Ten models: 70 fact checks, 30 secondary member checks and 10 baseline checks per setting and
#: judge, so fact and member reach MIN_KIND_CHECKS and baseline does not.
MODELS = {f"m{i}": "acme" for i in range(10)}


def first(sub: str) -> bool:
    return int(sub[1:]) < 5


def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
    """Facts: j1 says meets for m0-m4 and missing for m5-m9; j2 agrees except on food-1 I1,
    where it says the opposite (10 of 70 fact checks differ). Members: meets for m0-m4,
    partially_meets for m5-m9, both judges alike. Baselines: meets, alike. In text-only, j2
    gives no verdict on any member check."""
    kind, _ = KIND[(qid, cid)]
    if kind == "fact":
        meets = first(sub)
        if judge == "j2" and (qid, cid) == ("food-1", "I1"):
            meets = not meets
        return "meets" if meets else "missing"
    if kind == "member":
        if setting == "text_only" and judge == "j2":
            return None
        return "meets" if first(sub) else "partially_meets"
    return "meets"


def reference_kappa(a: list[str], b: list[str]) -> tuple[float, float, int]:
    """Cohen's kappa, agreement and n from the 4 x 4 confusion table, written out long-hand."""
    n = len(a)
    if n == 0:
        return math.nan, math.nan, 0
    table = {(x, y): 0 for x in VERDICTS for y in VERDICTS}
    for x, y in zip(a, b, strict=True):
        table[(x, y)] += 1
    observed = sum(table[(v, v)] for v in VERDICTS) / n
    chance = sum(
        sum(table[(v, y)] for y in VERDICTS) * sum(table[(x, v)] for x in VERDICTS)
        for v in VERDICTS
    ) / (n * n)
    kappa = (observed - chance) / (1 - chance) if chance < 1 else math.nan
    return kappa, observed, n


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    project = Project(MODELS, {"j1": "acme", "j2": "zeta"}, verdict, resamples=100)
    config = project.write(tmp_path_factory.mktemp("kinds") / "project")
    return pipeline.score(GamutProject(load_config(config)))


def test_two_kinds_with_known_different_agreement(tables: Tables) -> None:
    kk = tables["judge_kappa_by_kind"]
    assert MIN_KIND_CHECKS == 30  # the counts below sit on either side of it
    fact = row(kk, setting="multimodal", judge_a="j1", judge_b="j2", kind="fact")
    # 70 shared: 30 (meets, meets), 30 (missing, missing), 5 + 5 crossed; both judges' marginals
    # are 35 / 35, so chance agreement is 1/2 and kappa (6/7 - 1/2) / (1/2) = 5/7.
    assert fact["n_checks"] == 70 and not fact["secondary"]
    assert fact["agreement"] == pytest.approx(6 / 7)
    assert fact["kappa"] == pytest.approx(5 / 7)
    member = row(kk, setting="multimodal", judge_a="j1", judge_b="j2", kind="member")
    assert member["secondary"] and member["n_checks"] == 30 == MIN_KIND_CHECKS
    assert member["agreement"] == pytest.approx(1.0) and member["kappa"] == pytest.approx(1.0)
    baseline = row(kk, setting="multimodal", judge_a="j1", judge_b="j2", kind="baseline")
    assert baseline["n_checks"] == 10 < MIN_KIND_CHECKS
    assert baseline["agreement"] == pytest.approx(1.0) and math.isnan(baseline["kappa"])


def test_a_kind_with_no_joint_checks_gets_nan(tables: Tables) -> None:
    kk = tables["judge_kappa_by_kind"]
    member = row(kk, setting="text_only", judge_a="j1", judge_b="j2", kind="member")
    assert member["n_checks"] == 0
    assert math.isnan(member["kappa"]) and math.isnan(member["agreement"])
    # the other kinds of the same pair and setting are computed as usual
    fact = row(kk, setting="text_only", judge_a="j1", judge_b="j2", kind="fact")
    assert fact["kappa"] == pytest.approx(5 / 7)


def test_every_row_matches_the_reference_implementation(tables: Tables) -> None:
    kk = tables["judge_kappa_by_kind"]
    kinds = sorted(set(KIND.values()))
    assert len(kk) == len(SETTINGS) * len(kinds)  # one pair; kinds the rubrics lack: no row
    for setting, (kind, secondary) in itertools.product(SETTINGS, kinds):
        a, b = [], []
        for sub, (qid, cid) in itertools.product(MODELS, KIND):
            if KIND[(qid, cid)] != (kind, secondary):
                continue
            va = verdict(sub, setting, "j1", qid, cid)
            vb = verdict(sub, setting, "j2", qid, cid)
            if va is not None and vb is not None:
                a.append(va)
                b.append(vb)
        kappa, agreement, n = reference_kappa(a, b)
        got = row(kk, setting=setting, kind=kind, secondary=secondary)
        assert got["n_checks"] == n
        assert got["agreement"] == pytest.approx(agreement, nan_ok=True)
        expected = kappa if n >= MIN_KIND_CHECKS else math.nan
        assert got["kappa"] == pytest.approx(expected, nan_ok=True), (setting, kind)


def test_the_kinds_add_up_to_the_overall_kappa(tables: Tables) -> None:
    kk, overall = tables["judge_kappa_by_kind"], tables["judge_kappa"]
    for setting in SETTINGS:
        total = row(overall, setting=setting, judge_a="j1", judge_b="j2")
        rows = kk[kk["setting"] == setting]
        assert rows["n_checks"].sum() == total["n_checks"]
        agreed = (rows["agreement"].fillna(0) * rows["n_checks"]).sum()
        assert agreed / total["n_checks"] == pytest.approx(total["agreement"])
    # over all checks, the overall table is the reference kappa too (the refactor changed nothing)
    a = [verdict(s, "multimodal", "j1", q, c) for s, (q, c) in itertools.product(MODELS, KIND)]
    b = [verdict(s, "multimodal", "j2", q, c) for s, (q, c) in itertools.product(MODELS, KIND)]
    kappa, agreement, n = reference_kappa([str(x) for x in a], [str(x) for x in b])
    mm = row(overall, setting="multimodal", judge_a="j1", judge_b="j2")
    assert (mm["n_checks"], mm["agreement"]) == (n, pytest.approx(agreement))
    assert mm["kappa"] == pytest.approx(kappa)


def test_the_written_files_are_typed_and_documented(tables: Tables) -> None:
    back = pd.read_parquet(tables.out_dir / "judge_kappa_by_kind.parquet")
    assert list(back.columns) == list(TABLES["judge_kappa_by_kind"])
    assert back["secondary"].dtype == bool and back["n_checks"].dtype == np.int64
    assert back["kappa"].dtype == np.float64
    for ext in ("csv", "json"):
        assert (tables.out_dir / f"judge_kappa_by_kind.{ext}").is_file()


def test_the_main_project_kinds_are_below_the_floor(tmp_path: Path) -> None:
    """Two models give at most 14 shared checks of a kind: counts and agreement by hand, and no
    kappa, while the overall kappa (no floor) is unchanged."""
    t = pipeline.score(GamutProject(load_config(main_project().write(tmp_path))))
    kk = t["judge_kappa_by_kind"]
    mm = kk[kk["setting"] == "multimodal"].set_index("kind")
    assert dict(mm["n_checks"]) == {"fact": 14, "baseline": 2, "member": 6}
    # j2 differs from j1 on one fact of alpha only (food-1 I1)
    assert mm.loc["fact", "agreement"] == pytest.approx(13 / 14)
    assert mm.loc["member", "agreement"] == pytest.approx(1.0)
    assert mm["kappa"].isna().all()
    assert not math.isnan(row(t["judge_kappa"], setting="multimodal")["kappa"])


def test_one_judge_gives_an_empty_typed_table(tmp_path: Path) -> None:
    t = pipeline.score(
        GamutProject(load_config(main_project(judges={"j1": "acme"}).write(tmp_path)))
    )
    kk = t["judge_kappa_by_kind"]
    assert kk.empty and list(kk.columns) == list(TABLES["judge_kappa_by_kind"])
