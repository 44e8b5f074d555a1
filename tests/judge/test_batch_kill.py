"""Kill the collecting process with SIGKILL mid-ingest, then collect again: no verdict lost,
none stored twice, no batch submitted twice. The same for ``gamut judge --import-batch``,
killed between two files and inside the second."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from scoring.jsonl import BLOCK_BYTES
from scoring.judge.progress import NullProgress
from tests.fakes.batch_server import FakeBatchServer, run_batch_file
from tests.judge.project import TOTAL_CALLS, kill_when, openai_judge, write_project
from tests.judge.store import verdict_keys
from tests.judge.test_batch import batch_judge, hashed_verdict

ROOT = Path(__file__).resolve().parents[2]
_CHILD = (
    "import sys\n"
    "import scoring.judge.batch.runner as r\n"
    "r.COMMIT_EVERY = 1\n"
    "from gamut import pipeline\n"
    "from gamut.config import load_config\n"
    "from gamut.project import Project\n"
    "pipeline.judge(Project(load_config(sys.argv[1], require_keys=True)))\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sigkill_mid_ingest_then_collect_again(tmp_path: Path, provider: str) -> None:
    with FakeBatchServer(responder=hashed_verdict) as srv:
        cfg = write_project(tmp_path, batch_judge(srv, provider=provider))
        quiet = NullProgress()
        first = pipeline.judge(Project(load_config(cfg)), progress=quiet)
        assert first.judges["gpt"].submitted == TOTAL_CALLS and verdict_keys(tmp_path) == []
        srv.stream_delay = 0.1  # results arrive one line every 100 ms
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(cfg)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        kill_when(
            proc, lambda: len(verdict_keys(tmp_path)) >= 5, "the collector never stored a verdict"
        )
        before = set(verdict_keys(tmp_path))
        assert 5 <= len(before) < TOTAL_CALLS  # killed mid-ingest
        srv.stream_delay = 0.0
        again = pipeline.judge(Project(load_config(cfg)), progress=quiet)
        s = again.judges["gpt"]
        assert again.ok and s.in_flight == 0 and s.submitted == 0
        assert s.judged == TOTAL_CALLS - len(before)
        assert s.ignored_results == len(before)  # already stored: not stored again
        after = verdict_keys(tmp_path)
        assert len(after) == len(set(after)) == TOTAL_CALLS and before <= set(after)
        assert len(srv.created) == 1  # no batch submitted twice
        final = pipeline.judge(Project(load_config(cfg)), progress=quiet)
        assert final.judges["gpt"].cache_hits == TOTAL_CALLS and len(srv.created) == 1


def _import(cfg: Path, *files: Path) -> str:
    args = ["judge", "--config", str(cfg), "--import-batch", *map(str, files)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.slow
def test_sigkill_mid_import_then_import_again(tmp_path: Path) -> None:
    root = tmp_path / "p"
    cfg = write_project(root, openai_judge("http://127.0.0.1:9/v1", "local"))
    out = tmp_path / "requests"
    r = CliRunner().invoke(main, ["judge", "--config", str(cfg), "--export-batch", str(out)])
    assert r.exit_code == 0, r.output
    (req,) = out.glob("*.jsonl")
    results = tmp_path / "results.jsonl"
    run_batch_file(req, results, hashed_verdict)
    lines = results.read_bytes().splitlines(keepends=True)
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    first.write_bytes(b"".join(lines[:10]))
    # the second file: ten results, then blank lines (skipped) enough for a long read
    second = tmp_path / "second.jsonl"
    second.write_bytes(b"".join(lines[10:20]) + b"\n" * (8 * BLOCK_BYTES))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gamut", "judge", "--config", str(cfg), "--import-batch",
         str(first), str(second)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip

    def reading_the_second_file() -> bool:  # the first file is stored before it is opened
        fds = Path(f"/proc/{proc.pid}/fd")
        with contextlib.suppress(OSError):
            return any(os.readlink(fd) == str(second.resolve()) for fd in fds.iterdir())
        return False

    kill_when(proc, reading_the_second_file, "the import never opened its second file")
    after_kill = verdict_keys(root)
    assert len(after_kill) == 10  # the first file, whole; nothing of the second
    rest.write_bytes(b"".join(lines[10:]))
    text = _import(cfg, first, rest)
    assert f"{TOTAL_CALLS - 10} verdict(s) ingested" in text
    assert "10 result(s) already ingested" in text
    keys = verdict_keys(root)
    assert len(keys) == len(set(keys)) == TOTAL_CALLS and set(after_kill) <= set(keys)
    assert "0 verdict(s) ingested" in _import(cfg, results)
    assert len(verdict_keys(root)) == TOTAL_CALLS
