"""The score tables recover the judge behaviour planted by the synthetic paper-scale generator."""

from __future__ import annotations

from pathlib import Path

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from workbench.synthetic.paper import PAPER_JUDGES, write_paper_scale


def test_planted_family_bias_and_leniency_are_recovered(tmp_path: Path) -> None:
    config = write_paper_scale(tmp_path, n_questions=150, n_models=7, checks_per_question=20)
    t = pipeline.score(Project(load_config(config)))
    assert set(t.leaderboard["status"]) == {"complete"} and len(t.leaderboard) == 7 * 2 * 3
    partisan = max(PAPER_JUDGES, key=lambda j: j.own_family_bias).name
    lenient = max(PAPER_JUDGES, key=lambda j: j.leniency).name
    for setting in ("multimodal", "text_only"):
        pref = t["judge_self_preference"]
        sp = pref[pref["setting"] == setting].set_index("judge")
        assert sp["self_preference"].idxmax() == partisan
        assert sp.loc[partisan, "self_preference_lo"] > 0  # the CI excludes no preference
        offsets = t["judge_leniency"]
        len_ = offsets[offsets["setting"] == setting].set_index("judge")
        assert len_["offset"].idxmax() == lenient and len_.loc[lenient, "offset_lo"] > 0
    tau = t["judge_tau"]
    assert (tau["tau_b"] > 0.5).all()  # the judges broadly agree on the ordering
    assert (t["judge_kappa"]["kappa"] > 0.5).all()
    kinds = t["judge_kappa_by_kind"]
    assert len(kinds) == 2 * 3 * 12 and (kinds["kappa"] > 0.5).all()  # every kind, secondary apart
    per_pair = kinds.groupby(["setting", "judge_a", "judge_b"])["n_checks"].sum()
    overall = t["judge_kappa"].set_index(["setting", "judge_a", "judge_b"])["n_checks"]
    assert per_pair.sort_index().tolist() == overall.sort_index().tolist()
