"""Agreement of a judge with known labels: per-class figures and Cohen's kappa."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.synthetic.calibration import agreement

KEY = {"submission_id": "m", "setting": "multimodal", "question_id": "q"}


def _frame(verdicts: list[str], **extra: str) -> pd.DataFrame:
    return pd.DataFrame(
        [{**KEY, "check_id": f"I{i}", "verdict": v, **extra} for i, v in enumerate(verdicts)]
    )


def test_perfect_agreement() -> None:
    labels = _frame(["meets", "missing", "contradicts", "partially_meets"])
    out = agreement(labels, labels.copy()).set_index("verdict")
    assert out.loc["all", "kappa"] == pytest.approx(1.0)
    assert out.loc["all", "agreement"] == 1.0
    assert (out.loc[["meets", "missing"], "f1"] == 1.0).all()


def test_hand_computed_example() -> None:
    # labels: M M M S ; judge: M M P S  -> 3 of 4 agree
    labels = _frame(["meets", "meets", "meets", "missing"])
    judge = _frame(["meets", "meets", "partially_meets", "missing"])
    out = agreement(labels, judge).set_index("verdict")
    assert out.loc["meets", "precision"] == 1.0
    assert out.loc["meets", "recall"] == pytest.approx(2 / 3)
    assert out.loc["meets", "f1"] == pytest.approx(0.8)
    assert np.isnan(out.loc["partially_meets", "recall"])  # no such label
    assert out.loc["partially_meets", "precision"] == 0.0
    # p_o = 0.75; p_e = 0.75*0.5 + 0.25*0.25 = 0.4375; kappa = 0.3125 / 0.5625
    assert out.loc["all", "kappa"] == pytest.approx(0.3125 / 0.5625)
    assert out.loc["all", "agreement"] == 0.75


def test_kappa_is_zero_for_independent_raters() -> None:
    labels = _frame(["meets", "meets", "missing", "missing"])
    judge = _frame(["meets", "missing", "meets", "missing"])
    out = agreement(labels, judge).set_index("verdict")
    assert out.loc["all", "kappa"] == pytest.approx(0.0)
    assert out.loc["all", "agreement"] == 0.5


def test_kappa_is_undefined_when_both_give_one_verdict_only() -> None:
    labels = _frame(["meets", "meets"])
    out = agreement(labels, labels.copy()).set_index("verdict")
    assert np.isnan(out.loc["all", "kappa"]) and out.loc["all", "agreement"] == 1.0


def test_verdict_table_with_judges_is_compared_judge_by_judge() -> None:
    labels = _frame(["meets", "missing"])
    table = pd.concat(
        [_frame(["meets", "missing"], judge="a"), _frame(["missing", "missing"], judge="b")]
    )
    out = agreement(labels, table)
    overall = out[out.verdict == "all"].set_index("judge")
    assert overall.loc["a", "agreement"] == 1.0
    assert overall.loc["b", "agreement"] == 0.5


def test_only_checks_present_in_both_are_compared() -> None:
    labels = _frame(["meets", "missing", "contradicts"])
    judge = _frame(["meets", "missing"])
    out = agreement(labels, judge).set_index("verdict")
    assert out.loc["all", "support"] == 2
