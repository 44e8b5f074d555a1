"""Kill a real judge process with SIGKILL mid-run; the next run loses no verdict, stores none
twice and repeats no finished call. (A kill between writing a ledger shard and clearing the
working index is covered by tests/judge/test_cache.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, kill_when, openai_judge, write_project
from tests.judge.store import verdict_keys

ROOT = Path(__file__).resolve().parents[2]
# the library entry point (what `gamut judge` and `gamut run` call), without the whole CLI
_CHILD = (
    "import sys\n"
    "from gamut import pipeline\n"
    "from gamut.config import load_config\n"
    "from gamut.project import Project\n"
    "pipeline.judge(Project(load_config(sys.argv[1], require_keys=True)))\n"
)


def _spawn(cfg_path: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(cfg_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    with FakeLLMServer(latency=0.25) as srv:
        cfg_path = write_project(tmp_path, openai_judge(srv.openai_base_url, concurrency=2))
        proc = _spawn(cfg_path)
        kill_when(proc, lambda: len(verdict_keys(tmp_path)) >= 6, "the judge never got there")
        before = verdict_keys(tmp_path)
        sent_before = len(srv.requests)
        assert 6 <= len(before) < TOTAL_CALLS
        assert sent_before - len(before) <= 2  # only the calls in flight were lost

        report = pipeline.judge(Project(load_config(cfg_path)), progress=NullProgress())
        assert report.ok
        assert report.judges["gpt"].cache_hits == len(before)
        assert len(srv.requests) - sent_before == TOTAL_CALLS - len(before)
        after = verdict_keys(tmp_path)
        assert set(before) <= set(after) and len(after) == TOTAL_CALLS
        assert len(set(after)) == len(after)  # none stored twice
        # everything is in the ledger now, nothing left in the working index
        shards = list((tmp_path / ".gamut" / "ledger" / "verdicts").glob("*.parquet"))
        assert shards
