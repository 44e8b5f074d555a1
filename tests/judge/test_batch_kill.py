"""Kill the collecting process with SIGKILL mid-ingest, then collect again: no verdict lost,
none stored twice, no batch submitted twice."""

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
from tests.fakes.batch_server import FakeBatchServer
from tests.judge.project import TOTAL_CALLS, kill_when, write_project
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
