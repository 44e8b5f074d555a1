"""The demo's simulated audit: labels from the known labels at the stated error rate, two
annotators on part of the responses, adjudications where they differ, all readable."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from gamut.config import load_config
from workbench.synthetic.audit import ANNOTATOR_ERROR_RATE, AUDIT_SHARE, DOUBLE_SHARE

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo"


def _lines(name: str) -> pd.DataFrame:
    text = (DEMO / "audit" / f"{name}.jsonl").read_text(encoding="utf-8")
    return pd.DataFrame([json.loads(x) for x in text.splitlines()])


KEY = ["submission_id", "setting", "question_id", "check_id"]


def test_the_demo_config_names_its_audit_as_simulated() -> None:
    cfg = load_config(DEMO / "gamut.toml")
    assert cfg.benchmark.audit == "audit" and cfg.benchmark.audit_simulated


def test_simulated_annotators_depart_from_the_known_labels_at_the_stated_rate() -> None:
    truth = pd.read_parquet(DEMO / "verdicts" / "oracle.parquet")[[*KEY, "verdict"]]
    a, b, adj = _lines("sim-a"), _lines("sim-b"), _lines("sim-adjudicator")
    assert (a["note"] == "simulated annotator (demo)").all()
    for frame in (a, b):
        joined = frame.merge(truth, on=KEY, suffixes=("", "_true"), validate="one_to_one")
        assert len(joined) == len(frame)
        rate = float((joined["verdict"] != joined["verdict_true"]).mean())
        # 2,700 and 1,200 labels: 3 standard errors of a 10% rate are under 2 points
        assert abs(rate - ANNOTATOR_ERROR_RATE) < 0.03, rate
    # every check of a drawn response is labelled, and a share of the responses twice
    responses = a.groupby(["submission_id", "setting", "question_id"]).size()
    expected = truth.groupby(["submission_id", "setting", "question_id"]).size()[responses.index]
    assert (responses == expected).all()
    n_all = expected.groupby(level=["submission_id", "setting"]).size()
    assert (n_all >= AUDIT_SHARE * 42).all()
    double = b.groupby(["submission_id", "setting", "question_id"]).ngroups
    assert abs(double / len(responses) - DOUBLE_SHARE) < 0.1
    # adjudications: exactly where the two differ, giving the known label
    both = a.merge(b, on=KEY, suffixes=("_a", "_b"))
    differ = both[both["verdict_a"] != both["verdict_b"]][KEY]
    assert len(differ) == len(adj) > 0
    assert differ.merge(adj, on=KEY).shape[0] == len(adj)
    checked = adj.merge(truth, on=KEY, suffixes=("", "_true"))
    assert (checked["verdict"] == checked["verdict_true"]).all()
    assert (adj["role"] == "adjudication").all() and set(np.unique(a["role"])) == {"label"}
