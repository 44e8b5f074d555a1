"""Snapshot drift: a new model snapshot is announced once, the calibration pairs are judged under
it, and the ``judge_drift`` score table compares the two snapshots; the judges page shows it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from gamut.cli import main
from generator.judges import drift_table
from generator.tables import ScoreTables
from scoring.tables.drift import CALIBRATION_PAIRS, compare
from scoring.verdicts import Verdict
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project

OLD, NEW = "judge-model-2026-01-01", "judge-model-2026-06-01"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


def test_compare_counts_agreement_kappa_and_the_score_difference() -> None:
    m, p, s, c = (v.code for v in (Verdict.MEETS, Verdict.PARTIALLY_MEETS, Verdict.MISSING,
                                   Verdict.CONTRADICTS))  # fmt: skip
    old = np.array([m, m, s, c])
    new = np.array([m, p, s, m])
    got = compare(old, new, 0.5, -2.0)
    assert got["n_pairs"] == 4 and got["agreement"] == pytest.approx(0.5)
    assert got["old_score"] == pytest.approx(100 * (1 + 1 + 0 - 2) / 4)
    assert got["new_score"] == pytest.approx(100 * (1 + 0.5 + 0 + 1) / 4)
    assert got["score_diff"] == pytest.approx(got["new_score"] - got["old_score"])
    same = compare(old, old, 0.5, -2.0)
    assert same["kappa"] == pytest.approx(1.0) and same["score_diff"] == 0


def test_a_new_snapshot_is_announced_and_compared(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url), public=False)
    fake_llm.snapshot = OLD
    code, out = _run("judge", "--config", str(cfg))
    assert code == 0 and "reports model snapshot" not in out
    assert _run("score", "--config", str(cfg))[0] == 0
    results = tmp_path / "results"
    assert pd.read_parquet(results / "judge_drift.parquet").empty  # one snapshot: no drift
    # the provider moves the alias to a new snapshot; a changed response gives it work
    fake_llm.snapshot = NEW
    path = tmp_path / "submissions" / "alpha" / "multimodal.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["response"] += " It is also sweet."
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    before = len(fake_llm.requests)
    code, out = _run("judge", "--config", str(cfg))
    assert code == 0, out
    notes = [line for line in out.splitlines() if NEW in line]
    assert len(notes) == 1 and OLD in notes[0] and "judge_drift" in notes[0]
    assert _run("score", "--config", str(cfg))[0] == 0  # the score step compares the snapshots
    drift = pd.read_parquet(results / "judge_drift.parquet")
    assert drift[["judge", "old_snapshot", "new_snapshot"]].values.tolist() == [["gpt", OLD, NEW]]
    n = int(drift["n_pairs"].iloc[0])
    assert 0 < n <= min(CALIBRATION_PAIRS, TOTAL_CALLS)
    # the fake judge's verdicts depend only on the request: the snapshots agree fully
    assert drift["agreement"].iloc[0] == pytest.approx(1.0)
    assert drift["score_diff"].iloc[0] == pytest.approx(0.0)
    calls = len(fake_llm.requests) - before
    assert calls > n, "the changed response's checks, then the calibration pairs"
    # said once: a later run that judges something names the snapshot no more
    row["response"] += " Very sweet."
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    code, out = _run("judge", "--config", str(cfg))
    assert code == 0 and NEW not in out, out

    tables = ScoreTables(tmp_path, {"judge_drift": drift}, {}, {})
    shown = drift_table(tables)
    assert shown is not None and len(shown.rows) == 1
    assert drift_table(ScoreTables(tmp_path, {"judge_drift": drift.iloc[:0]}, {}, {})) is None
