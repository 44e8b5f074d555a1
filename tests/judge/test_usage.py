"""The usage table beside the verdict table, from a real judge run (the fake provider over HTTP):
the leaderboard's judging tokens and cost add up to what the run reported it spent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError
from scoring.judge.progress import NullProgress
from scoring.judge.usage import dictionary_codes, grouped, usage_path
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
    # on its own (usage_frame), the same table as the one summed in the verdict table's pass
    pd.testing.assert_frame_equal(pd.read_parquet(usage_path(verdicts)), usage)


def test_a_column_of_a_changed_ledger_is_refused(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """A column read after the index (the usage and model columns) must come from the shards
    the index was built from: a ledger that changed meanwhile is refused by name."""
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    pipeline.judge(Project(cfg), progress=NullProgress())
    ledger = Project(cfg).ledger
    index, _ = ledger.key_index()
    assert sum(len(c) for c in ledger.indexed_column("tokens_in")) == len(index) == TOTAL_CALLS
    shard = next((ledger.root / "verdicts").glob("*.parquet"))
    shard.rename(shard.with_name("f" * 64 + ".parquet"))  # another shard set than the index's
    with pytest.raises(GamutError, match="changed while a run read them"):
        list(ledger.indexed_column("tokens_in"))


def test_codes_agree_across_chunks_and_grouping_does_not_allocate_the_product() -> None:
    a = pa.array(["direct", "batch", "direct"]).dictionary_encode()
    b = pa.array(["replay", "direct"])  # a plain chunk: encoded on its own, then unified
    codes, values = dictionary_codes([a, b])
    assert [values[c] for c in codes] == ["direct", "batch", "direct", "replay", "direct"]
    assert codes.dtype == np.int8
    many, names = dictionary_codes([pa.array([f"model-{i}" for i in range(300)])])
    assert many.dtype == np.int16 and len(names) == 300 and many[-1] == 299
    group = np.array([7, 3, 7, 10**12], np.int64)  # a product of sizes no array could hold
    used, place = grouped(group, 10**13)
    assert used.tolist() == [3, 7, 10**12] and place.tolist() == [1, 0, 1, 2]
    used, place = grouped(group[:3], 11)  # few groups: counted
    assert used.tolist() == [3, 7] and place.tolist() == [1, 0, 1]
