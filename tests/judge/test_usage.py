"""The usage table beside the verdict table, from a real judge run (the fake provider over HTTP):
the leaderboard's judging tokens and cost add up to what the run reported it spent."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from scoring.judge.usage import USAGE_COLUMNS, usage_frame, usage_path
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project

PRICES = "price_in_per_mtok = 2.0\nprice_cached_in_per_mtok = 0.5\nprice_out_per_mtok = 8.0"


def test_leaderboard_cost_adds_up_to_the_run(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra=PRICES)))
    s = pipeline.judge(Project(cfg), progress=NullProgress()).judges["gpt"]
    verdicts = pipeline.write_verdicts(Project(cfg))
    usage = pd.read_parquet(usage_path(verdicts))
    assert set(usage["source"]) == {"direct"} and usage["n_verdicts"].sum() == TOTAL_CALLS
    assert (usage["tokens_in"].sum(), usage["tokens_out"].sum()) == (s.tokens_in, s.tokens_out)
    lb = pipeline.score(Project(cfg)).leaderboard
    assert (lb["judge_tokens_recorded"].dropna() == 1.0).all()
    assert int(lb["judge_calls"].sum()) == s.calls == TOTAL_CALLS
    assert int(lb["judge_tokens_cached"].sum()) == s.tokens_cached
    assert s.cost is not None and lb["judge_cost_usd"].sum() == pytest.approx(s.cost)
    row = lb.iloc[0]
    by_hand = (
        (row["judge_tokens_in"] - row["judge_tokens_cached"]) * 2.0
        + row["judge_tokens_cached"] * 0.5
        + row["judge_tokens_out"] * 8.0
    ) / 1e6
    assert row["judge_cost_usd"] == pytest.approx(by_hand) and by_hand > 0
    # nothing changed: the recorded run is taken as it is, the usage table with it
    before = usage_path(verdicts).stat().st_mtime_ns
    pipeline.write_verdicts(Project(cfg))
    assert usage_path(verdicts).stat().st_mtime_ns == before
    usage_path(verdicts).unlink()  # a results folder from before the usage table: written again
    pipeline.write_verdicts(Project(cfg))
    assert usage_path(verdicts).is_file()


def test_usage_is_the_sum_of_each_pairs_recorded_counts(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """Each judge's rows are the counts recorded with the verdict of each of its pairs, summed
    per (submission, setting, source) and sorted by them: the same as a group-by over the pairs."""
    url = fake_llm.openai_base_url
    cfg = write_project(tmp_path, openai_judge(url) + openai_judge(url, "other", primary=False))
    project = Project(load_config(cfg))
    pipeline.judge(project, progress=NullProgress())
    plans = project.pair_plans()
    index, stored = project.ledger.key_index(
        columns=["source", "calls", "tokens_in", "tokens_cached", "tokens_out"]
    )
    want = []
    for p in plans:
        row = index.find(p.keys)
        pairs = pd.DataFrame(
            {
                "submission_id": [p.units[int(u)].submission_id for u in p.unit],
                "setting": [p.units[int(u)].setting.value for u in p.unit],
                "judge": p.judge.name,
                "row": row,
                "empty": p.empty,
            }
        )
        pairs = pairs[~pairs["empty"] & (pairs["row"] >= 0)]
        for c in ("source", "calls", "tokens_in", "tokens_cached", "tokens_out"):
            pairs[c] = stored[c].to_numpy(zero_copy_only=False)[pairs["row"].to_numpy()]
        pairs["n_verdicts"] = 1
        keys = ["submission_id", "setting", "judge", "source"]
        want.append(pairs.drop(columns=["row", "empty"]).groupby(keys).sum().reset_index())
    expected = pd.concat(want, ignore_index=True)[list(USAGE_COLUMNS)]
    got = usage_frame(plans, project.ledger)
    assert set(got["judge"]) == {"gpt", "other"} and len(set(got["setting"])) == 2
    assert got["tokens_in"].sum() > 0 and got["n_verdicts"].sum() < 2 * TOTAL_CALLS + 20
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
