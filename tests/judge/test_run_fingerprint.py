"""A judge run that nothing changed since the last complete one does no work, and any change of
an input, the ledger or the selection makes the next run do its full work."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, TOTAL_CHECKS, openai_judge, write_project

NOTE = "nothing changed since the last complete run"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_an_unchanged_project_is_recognised_and_a_changed_one_is_judged(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and f"{TOTAL_CALLS} judged" in out and NOTE not in out
    table = tmp_path / "results" / "verdicts.parquet"
    stamp = table.stat().st_mtime_ns
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and NOTE in out, out
    assert f"{TOTAL_CHECKS} checks: {TOTAL_CALLS} cache hits" in out
    assert table.stat().st_mtime_ns == stamp, "the verdict table is not rewritten"
    assert len(fake_llm.requests) == TOTAL_CALLS

    # another selection is its own run: planned in full, and nothing to call
    code, out = _run("judge", "--config", cfg, "--setting", "multimodal")
    assert code == 0 and NOTE not in out and "0 judged" in out

    # one response changed: the fingerprint differs, its checks are judged
    path = tmp_path / "submissions" / "alpha" / "text_only.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["response"] += " And more."
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and NOTE not in out, out
    assert len(fake_llm.requests) > TOTAL_CALLS
    assert table.stat().st_mtime_ns != stamp


def test_a_lost_verdict_table_or_record_means_a_full_run(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    assert _run("judge", "--config", cfg)[0] == 0
    table = tmp_path / "results" / "verdicts.parquet"
    table.unlink()
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and table.is_file()
    for record in (tmp_path / ".gamut" / "private" / "runs").glob("judge-*.json"):
        record.write_text("{not json")
    code, out = _run("judge", "--config", cfg)
    assert code == 0 and NOTE not in out and f"{TOTAL_CALLS} cache hits" in out
    assert len(fake_llm.requests) == TOTAL_CALLS
