"""Runs that overlap on one ledger's batches: a run for one submission collects another's
batches (and keeps every paid result), ``--dry-run`` counts only its own requests in flight,
``--collect-only`` starts nothing, and a run killed between creating a batch and recording it
(with the provider's clock behind) leaves one batch, found by what it carries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from tests.fakes.batch_server import FakeBatchServer
from tests.judge.project import TOTAL_CALLS, kill_when, write_project
from tests.judge.store import failures
from tests.judge.test_batch import batch_judge, hashed_verdict
from tests.judge.test_batch_cli import _rows
from tests.judge.test_batch_cli import _run as _cli

ROOT = Path(__file__).resolve().parents[2]
ALPHA, BETA = 20, 7  # requests of each test submission (beta has one empty response)
QUIET = NullProgress()


def _dry(cfg: Path, sid: str) -> Any:
    report = pipeline.judge(Project(load_config(cfg)), None, [sid], dry_run=True)
    return report.judges["gpt"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("public", [True, False])
def test_a_run_for_one_submission_keeps_another_submissions_results(
    tmp_path: Path, srv: FakeBatchServer, provider: str, public: bool
) -> None:
    cfg = write_project(tmp_path, batch_judge(srv, provider=provider), public=public)
    c = str(cfg)
    srv.hold = True
    code, out = _cli("judge", "--config", c, "--submission", "alpha")
    assert code == 75 and f"{ALPHA} requests in flight" in out, out
    code, out = _cli("judge", "--config", c, "--submission", "beta")
    assert code == 75 and f"{BETA} requests in flight" in out, out  # beta's own, not alpha's
    a = _dry(cfg, "alpha")
    assert a.in_flight == ALPHA and a.planned == 0  # counted by key: not beta's requests
    assert _dry(cfg, "beta").in_flight == BETA
    srv.release()
    code, out = _cli("judge", "--config", c, "--submission", "beta")
    assert code == 0, out
    assert f"{ALPHA} verdicts stored for other submissions' requests" in out, out
    assert "ignored" not in out
    assert _rows(tmp_path) == TOTAL_CALLS  # alpha's paid results are in the ledger
    a = _dry(cfg, "alpha")
    assert a.in_flight == 0 and a.planned == 0 and a.cache_hits == ALPHA
    code, out = _cli("judge", "--config", c, "--submission", "alpha")
    assert code == 0 and "0 submitted" in out, out
    assert len(srv.created) == 2  # one batch per submission, nothing asked twice
    assert sum(srv.batch_sizes()) == TOTAL_CALLS


def test_another_runs_unusable_reply_is_recorded_and_asked_again_by_its_own_run(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    cfg = write_project(tmp_path, batch_judge(srv))
    c = str(cfg)
    srv.hold = True
    assert _cli("judge", "--config", c, "--submission", "alpha")[0] == 75
    first = srv.created[0]
    bad = srv.batches[first].parsed()[0][0]
    srv.line_fault_fn = lambda cid, body: "prose" if cid == bad and len(srv.created) == 1 else None
    srv.release()
    code, out = _cli("judge", "--config", c, "--submission", "beta")
    # beta's run cannot re-ask alpha's request (it has not its prompt): recorded as failed,
    # not listed as beta's failure, and the batch is collected
    assert code == 75 and f"{BETA} requests in flight" in out, out  # beta's own batch
    assert "0 failed" in out
    assert f"{ALPHA - 1} verdicts stored for other submissions' requests (1 failed" in out, out
    failed = failures(tmp_path)
    assert len(failed) == 1 and next(iter(failed.values()))["kind"] == "bad_output"
    code, out = _cli("judge", "--config", c, "--submission", "alpha")
    assert code == 75 and "1 requests in flight" in out, out  # asked again, by alpha's run
    code, out = _cli("judge", "--config", c, "--submission", "alpha")
    assert code == 0, out
    assert srv.batch_sizes() == [ALPHA, BETA, 1]
    assert failures(tmp_path) == {}  # the verdict cleared the recorded failure
    assert _cli("judge", "--config", c, "--submission", "beta")[0] == 0
    assert _rows(tmp_path) == TOTAL_CALLS


def test_collect_only_submits_no_first_ask(tmp_path: Path, srv: FakeBatchServer) -> None:
    cfg = write_project(tmp_path, batch_judge(srv))
    c = str(cfg)
    code, out = _cli("judge", "--config", c, "--collect-only")
    assert code == 0 and "0 submitted" in out, out
    assert f"{TOTAL_CALLS} not asked (collect only" in out, out
    assert srv.created == []  # nothing started by the collector
    srv.hold = True
    assert _cli("judge", "--config", c, "--submission", "alpha")[0] == 75  # the approved run
    first = srv.created[0]
    bad = srv.batches[first].parsed()[0][0]
    srv.line_fault_fn = lambda cid, body: "prose" if cid == bad and len(srv.created) == 1 else None
    srv.release()
    code, out = _cli("judge", "--config", c, "--collect-only")
    assert code == 75, out  # the re-ask is in flight
    assert srv.batch_sizes() == [ALPHA, 1]  # the re-ask only: beta was never approved
    code, out = _cli("judge", "--config", c, "--collect-only")
    assert code == 0 and f"{BETA} not asked" in out, out
    assert _rows(tmp_path) == ALPHA
    # the collector's "nothing left to collect" is not "every pair judged": a full run still
    # asks beta's requests
    code, out = _cli("judge", "--config", c)
    assert code == 75 and f"{BETA} requests in flight" in out, out


def test_dry_run_collect_only_plans_no_call(tmp_path: Path, srv: FakeBatchServer) -> None:
    cfg = write_project(tmp_path, batch_judge(srv))
    report = pipeline.judge(Project(load_config(cfg)), dry_run=True, collect_only=True)
    assert report.judges["gpt"].planned == 0


_CHILD = (
    "import sys\n"
    "from gamut import pipeline\n"
    "from gamut.config import load_config\n"
    "from gamut.project import Project\n"
    "from scoring.judge.progress import NullProgress\n"
    "project = Project(load_config(sys.argv[1], require_keys=True))\n"
    "pipeline.judge(project, progress=NullProgress())\n"
)


def _judge_in_a_child(cfg: Path) -> subprocess.Popen[bytes]:
    """``gamut judge`` of ``cfg`` in a process of its own (to be killed)."""
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(cfg)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("skew", [-90.0, 90.0])
def test_killed_between_create_and_record_with_skewed_clocks_one_batch(
    tmp_path: Path, provider: str, skew: float
) -> None:
    with FakeBatchServer(responder=hashed_verdict) as srv:
        cfg = write_project(tmp_path, batch_judge(srv, provider=provider))
        srv.clock_skew_s = skew  # the provider's clock, this far off ours
        srv.create_delay = 2.0  # the batch exists; its id is not yet answered
        proc = _judge_in_a_child(cfg)
        kill_when(proc, lambda: len(srv.created) == 1, "the run never created its batch")
        srv.create_delay = 0.0
        again = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        s = again.judges["gpt"]
        assert again.ok and s.submitted == 0 and s.judged == TOTAL_CALLS, s
        assert len(srv.created) == 1  # found by what it carries, not submitted twice
        assert _rows(tmp_path) == TOTAL_CALLS


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_killed_while_creating_a_reask_batch_after_collecting(
    tmp_path: Path, provider: str
) -> None:
    """The step collects a batch, then creates the re-ask batch, then marks the first one
    collected: killed at the create, the next run collects the first batch again (storing
    nothing twice) and finds the re-ask batch instead of creating another."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        cfg = write_project(tmp_path, batch_judge(srv, provider=provider))
        first = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        assert first.judges["gpt"].submitted == TOTAL_CALLS
        bad = srv.batches[srv.created[0]].parsed()[0][0]
        srv.line_fault_fn = lambda cid, body: "prose" if cid == bad else None
        srv.create_delay = 2.0
        proc = _judge_in_a_child(cfg)
        kill_when(proc, lambda: len(srv.created) == 2, "the run never created its re-ask batch")
        srv.create_delay = 0.0
        srv.line_fault_fn = None
        again = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        s = again.judges["gpt"]
        assert s.submitted == 0, s  # the re-ask batch was found, not created again
        done = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        assert done.ok and done.in_flight == 0
        assert len(srv.created) == 2 and srv.batch_sizes() == [TOTAL_CALLS, 1]
        assert _rows(tmp_path) == TOTAL_CALLS
