"""The verdict table: a fresh store (what a workflow job has after ``gamut ledger pull``) writes
the table a warm one wrote, and the table written one judge at a time is the verdict frame."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from scoring.judge.table import STATS_COLUMNS, _recoded
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import CHECKS, openai_judge, write_project


def _two_judges(url: str) -> str:
    return openai_judge(url) + openai_judge(url, "other", primary=False)


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


@pytest.mark.parametrize("public", [True, False])
def test_a_fresh_store_writes_the_table_a_warm_one_wrote(
    tmp_path: Path, fake_llm: FakeLLMServer, public: bool
) -> None:
    cfg = str(write_project(tmp_path, _two_judges(fake_llm.openai_base_url), public=public))
    code, out = _run("judge", "--config", cfg)
    assert code == 0, out
    table = tmp_path / "results" / "verdicts.parquet"
    warm = table.read_bytes()
    ledger = tmp_path / ".gamut" / "ledger"
    shards = {p: p.read_bytes() for p in ledger.rglob("*.parquet")}
    calls = len(fake_llm.requests)
    # a workflow job after `gamut ledger pull`: the ledger and nothing else (no working index,
    # no compiled checks, no run records, no response digests, no verdict table)
    for p in (tmp_path / ".gamut").iterdir():
        if p != ledger:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    table.unlink()
    code, out = _run("judge", "--config", cfg)
    assert code == 0, out
    assert len(fake_llm.requests) == calls, "every verdict comes from the ledger"
    assert pq.read_table(table).equals(pq.read_table(pa.BufferReader(warm)), check_metadata=True)
    assert table.read_bytes() == warm
    assert {p: p.read_bytes() for p in ledger.rglob("*.parquet")} == shards  # never rewritten


@pytest.mark.parametrize("public", [True, False])
def test_the_table_written_one_judge_at_a_time_is_the_verdict_frame(
    tmp_path: Path, fake_llm: FakeLLMServer, public: bool
) -> None:
    cfg = load_config(write_project(tmp_path, _two_judges(fake_llm.openai_base_url), public=public))
    project = Project(cfg)
    # beta is not judged: of its pairs, only those of its empty response have a row (missing)
    pipeline.judge(project, submissions=["alpha"], progress=NullProgress())
    written = pq.read_table(pipeline.write_verdicts(project))
    frame = pipeline.verdict_table(project)
    assert written.to_pylist() == pa.Table.from_pandas(frame, preserve_index=False).to_pylist()
    beta = frame[frame.submission_id == "beta"]
    assert set(beta.question_id) == {"plants-0001"} and set(beta.verdict) == {"missing"}
    assert len(beta) == 2 * CHECKS["plants-0001"]  # one row per judge and check
    assert written.column_names[-2:] == (["rationale", "check_text"] if public else
                                         ["secondary", "verdict"])  # fmt: skip
    md = pq.read_metadata(tmp_path / "results" / "verdicts.parquet")
    stats = {
        md.schema.column(i).name: md.row_group(0).column(i).statistics is not None
        for i in range(md.num_columns)
    }
    assert {c for c, has in stats.items() if has} == set(STATS_COLUMNS)  # what readers filter by
    # every pair judged: the second judge's part takes the first's id columns as they are
    pipeline.judge(project, progress=NullProgress())
    written = pq.read_table(pipeline.write_verdicts(project))
    frame = pipeline.verdict_table(project)
    assert written.to_pylist() == pa.Table.from_pandas(frame, preserve_index=False).to_pylist()
    assert set(frame.judge) == {"gpt", "other"} and "missing" not in set(
        frame[frame.submission_id == "alpha"].verdict
    )


@given(st.lists(st.integers(0, 5), max_size=40), st.integers(6, 9))
def test_a_verdict_column_keeps_the_values_it_uses_in_their_order(codes: list[int], n: int) -> None:
    values = [f"v{i}" for i in range(n)][::-1]  # not sorted: the order kept is theirs
    got, used = _recoded(np.array(codes, dtype=np.int16), values)
    want = pd.Categorical.from_codes(codes, categories=pd.Index(values)).remove_unused_categories()
    assert got.tolist() == want.codes.tolist() and used == want.categories.tolist()


@pytest.mark.parametrize("judge", ["lenient", "partisan"])
def test_a_fresh_store_judged_by_a_judge_not_first_in_the_config(
    tmp_path: Path, judge: str
) -> None:
    """The verdict table's column types do not come from a judge with no rows yet (the first
    judge of the config has none: its text columns would be Arrow's null type)."""
    from tests.demo_config import write_demo_config

    cfg = write_demo_config(tmp_path)
    r = CliRunner().invoke(main, ["judge", "--config", str(cfg), "--judge", judge])
    assert r.exit_code == 0, r.output
    table = pq.read_table(tmp_path / "results" / "verdicts.parquet")
    assert table.num_rows > 0 and table.column("judge").unique().to_pylist() == [judge]
    assert pa.types.is_string(table.schema.field("rationale").type)


def test_the_table_records_the_snapshot_each_judge_reported(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """The verdict table's stamps record, per judge and (submission, setting), the model snapshots
    the provider reported for the verdicts it holds; the leaderboard row carries them."""
    from scoring.tables.stamps import read_stamps

    cfg = str(write_project(tmp_path, _two_judges(fake_llm.openai_base_url), public=False))
    fake_llm.snapshot = "fake-model-2026-01-01"
    code, out = _run("judge", "--config", cfg)
    assert code == 0, out
    stamps = read_stamps(tmp_path / "results" / "verdicts.parquet")
    assert stamps is not None and set(stamps["judges"]) == {"gpt", "other"}
    for judge in stamps["judges"].values():
        assert judge["prompt_version"] == "gamut-judge-v1"
        per_unit = [snaps for subs in judge["snapshots"].values() for snaps in subs.values()]
        assert per_unit and all(s == ["fake-model-2026-01-01"] for s in per_unit)
    lb = pipeline.score(Project(load_config(Path(cfg)))).leaderboard
    judged = lb[lb["n_checks_missing"] < lb["n_checks"]]
    assert len(judged) and set(judged["judge_snapshot"]) == {"fake-model-2026-01-01"}
    assert not judged["stale"].any()
