"""``gamut judge`` and ``gamut export verdicts`` through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from gamut.cli import main
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_TEXT_COLUMNS
from tests.demo_config import write_demo_config
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, TOTAL_CHECKS, openai_judge, write_project
from tests.judge.store import verdict_keys


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_judge_then_export_every_format(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    code, out = _run("judge", "--config", cfg, "--dry-run")
    assert code == 0 and f"dry run: {TOTAL_CALLS} call(s) would be made" in out
    assert fake_llm.requests == []
    code, out = _run("judge", "--config", cfg)
    assert code == 0, out
    assert f"{TOTAL_CALLS} judged with {TOTAL_CALLS} calls" in out and "verdict table" in out
    assert (tmp_path / "results" / "verdicts.parquet").is_file()
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and f"{TOTAL_CALLS} cache hits" in out
    assert len(fake_llm.requests) == TOTAL_CALLS
    frames = {}
    for ext in ("parquet", "csv", "jsonl"):
        dest = tmp_path / f"v.{ext}"
        code, out = _run("export", "verdicts", "--out", str(dest), "--config", cfg)
        assert code == 0 and f"wrote {TOTAL_CHECKS} verdict(s)" in out
        frames[ext] = (
            pd.read_parquet(dest)
            if ext == "parquet"
            else pd.read_csv(dest)
            if ext == "csv"
            else pd.read_json(dest, lines=True)
        )
    for df in frames.values():
        assert (
            list(df.columns)
            == [  # the columns of the site's and the Hub's verdict files
                *VERDICT_COLUMNS[:3],
                "judge_id",
                "question_id",
                "domain",
                *VERDICT_COLUMNS[4:],
                *VERDICT_TEXT_COLUMNS,
            ]
        )
        assert VERDICT_COLUMNS[3] == "question_id" and df["domain"].notna().all()
        assert len(df) == TOTAL_CHECKS
        assert set(df.judge_id) == {"openai:judge-model@gamut-judge-v1"}
    first = json.loads((tmp_path / "v.jsonl").read_text().splitlines()[0])
    assert first["secondary"] in (True, False)


def test_export_rejects_unknown_extension(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    code, out = _run("export", "verdicts", "--out", str(tmp_path / "v.xlsx"), "--config", cfg)
    assert code == 1 and ".parquet, .csv or .jsonl" in out


def test_failures_exit_1_and_are_listed_and_kept_verdicts_stay(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url, concurrency=1)))
    fake_llm.queue_faults("400")
    code, out = _run("judge", "--config", cfg)
    assert code == 1
    assert "1 check(s) failed" in out and "rejected" in out and "alpha/" in out
    df = pd.read_parquet(tmp_path / "results" / "verdicts.parquet")
    assert len(df) == TOTAL_CHECKS - 1
    code, _ = _run("judge", "--config", cfg)
    assert code == 0 and len(fake_llm.requests) == TOTAL_CALLS + 1


def test_deadline_stops_the_run_and_the_next_run_finishes(tmp_path: Path) -> None:
    with FakeLLMServer(latency=0.3) as srv:
        cfg = str(write_project(tmp_path, openai_judge(srv.openai_base_url, concurrency=4)))
        code, out = _run("judge", "--config", cfg, "--deadline", "0.45")
        assert code == 1 and "not attempted" in out and "deadline" in out
        assert "4 check(s) failed" in out  # the calls in flight at the deadline
        sent = len(srv.requests)
        stored = len(verdict_keys(tmp_path))
        code, out = _run("judge", "--config", cfg)
        assert code == 0, out
        assert len(srv.requests) - sent == TOTAL_CALLS - stored
    df = pd.read_parquet(tmp_path / "results" / "verdicts.parquet")
    assert len(df) == TOTAL_CHECKS


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert _run("judge", "--setting", "audio")[0] == 2
    assert _run("export", "verdicts")[0] == 2


@pytest.mark.parametrize("cmd", [["judge"], ["export"], ["export", "verdicts"]])
def test_every_command_and_option_has_help(cmd: list[str]) -> None:
    import click

    group: click.Command = main
    ctx = click.Context(main)
    for name in cmd:
        assert isinstance(group, click.Group)
        found = group.get_command(ctx, name)
        assert found is not None
        group = found
    assert group.help
    for p in group.params:
        if isinstance(p, click.Option):
            assert p.help, p.name


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--dry-run", "--import-batch", "x.jsonl"], "--dry-run and --import-batch exclude"),
        (["--export-batch", "out", "--dry-run"], "--dry-run and --export-batch exclude"),
        (["x.jsonl"], "result files are given only with --import-batch"),
        (["--import-batch"], "--import-batch needs the result FILE(s)"),
        (["--collect-only", "--export-batch", "out"], "--collect-only works on provider batches"),
        (["--import-batch", "--setting", "multimodal", "x.jsonl"], "drop --submission/--setting"),
    ],
)
def test_options_that_do_not_fit_the_mode_are_named_before_anything_runs(
    tmp_path: Path, args: list[str], said: str
) -> None:
    (tmp_path / "x.jsonl").write_text("{}\n")
    args = [str(tmp_path / a) if a in ("x.jsonl", "out") else a for a in args]
    code, out = _run("judge", "--config", str(tmp_path / "absent.toml"), *args)
    assert code == 2 and said in out, out


def test_every_problem_with_the_options_is_named_at_once(tmp_path: Path) -> None:
    code, out = _run(
        "judge", "--config", str(tmp_path / "absent.toml"), "--dry-run", "--collect-only",
        "--export-batch", str(tmp_path / "o"), "--import-batch",
    )  # fmt: skip
    assert code == 2
    for said in ("exclude each other", "needs the result FILE(s)", "--collect-only works on"):
        assert said in out, out


def test_the_dry_run_and_the_run_count_replayed_verdicts_alike(tmp_path: Path) -> None:
    cfg = str(write_demo_config(tmp_path))
    code, dry = _run("judge", "--config", cfg, "--dry-run", "--judge", "oracle")
    n = int(dry.split("would be made (")[1].split(" verdict(s)")[0])
    assert code == 0 and "dry run: 0 call(s)" in dry and n > 0
    code, out = _run("judge", "--config", cfg, "--judge", "oracle")
    assert code == 0 and f"{n} given offline (no call left this machine)" in out
    assert f"{n} checks to judge" in out and "calls" not in out.split("verdict table")[0]
