"""Kill a real judge process mid-run with SIGKILL; the next run repeats no finished call."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project

ROOT = Path(__file__).resolve().parents[2]
# the library entry point (what `gamut judge` and `gamut run` call), without the whole CLI
_CHILD = (
    "import sys\n"
    "from gamut import pipeline\n"
    "from gamut.config import load_config\n"
    "from gamut.project import Project\n"
    "pipeline.judge(Project(load_config(sys.argv[1], require_keys=True)))\n"
)


def _stored(cache: Path) -> set[str]:
    if not cache.exists():
        return set()
    try:
        with sqlite3.connect(cache, timeout=5) as db:
            return {k for (k,) in db.execute("SELECT key FROM verdicts")}
    except sqlite3.OperationalError:  # tables not created yet
        return set()


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    with FakeLLMServer(latency=0.25) as srv:
        cfg_path = write_project(tmp_path, openai_judge(srv.openai_base_url, concurrency=2))
        cache = tmp_path / ".gamut" / "verdicts.sqlite"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(cfg_path)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 120
            while len(_stored(cache)) < 6:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the judge never stored a verdict"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        before = _stored(cache)
        sent_before = len(srv.requests)
        assert 6 <= len(before) < TOTAL_CALLS
        assert sent_before - len(before) <= 2  # only the calls in flight were lost

        report = pipeline.judge(Project(load_config(cfg_path)), progress=NullProgress())
        assert report.ok
        assert report.judges["gpt"].cache_hits == len(before)
        assert len(srv.requests) - sent_before == TOTAL_CALLS - len(before)
        after = _stored(cache)
        assert before <= after and len(after) == TOTAL_CALLS
