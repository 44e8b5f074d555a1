"""Jobs killed around creating a batch, each with its own ledger copy, on one provider account
whose clock is minutes off ours: on rerun each job adopts only a batch shown to carry its own
requests (OpenAI: the metadata tag; Anthropic: the custom ids of an ended batch's results), so
every batch on the account is collected, none twice in one ledger, and no request is paid twice.

Before recovery had to be shown, a Message Batch was matched by its request count and the
creation time nearest the record's: with the clock 90 s ahead, two jobs of 10 requests each
paid 30 requests for 20 pairs (one job adopted the other's batch, ignored its results, asked
its own again and never collected its own)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.outcome import JudgeStats
from scoring.judge.progress import NullProgress
from tests.fakes.batch_server import FakeBatchServer
from tests.judge.project import kill_when, write_project
from tests.judge.store import batch_rows, verdict_keys
from tests.judge.test_batch import batch_judge, hashed_verdict

ROOT = Path(__file__).resolve().parents[2]
QUIET = NullProgress()
SUBMISSIONS = ("s1", "s2", "s3")
#: Requests of one submission: food 7 checks, plants 3 (so every job's batch has 10).
PAIRS = 10
RESPONSES = {
    sid: {
        "multimodal": {
            "food-0001": f"Pad thai with rice noodles ({sid}).",
            "plants-0001": f"A Monstera deliciosa ({sid}).",
        }
    }
    for sid in SUBMISSIONS
}
_CHILD = (
    "import sys\n"
    "from gamut import pipeline\n"
    "from gamut.config import load_config\n"
    "from gamut.project import Project\n"
    "from scoring.judge.progress import NullProgress\n"
    "project = Project(load_config(sys.argv[1], require_keys=True))\n"
    "pipeline.judge(project, None, [sys.argv[2]], progress=NullProgress())\n"
)


class Job:
    """One job: its own copy of the project (and ledger), judging one submission."""

    def __init__(
        self, srv: FakeBatchServer, root: Path, provider: str, sid: str, **project: Any
    ) -> None:
        self.srv, self.root, self.sid = srv, root, sid
        project = {"responses": RESPONSES, **project}
        self.cfg = write_project(root, batch_judge(srv, provider=provider), **project)

    def _child(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(self.cfg), self.sid],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def killed_before_create(self) -> None:
        """Killed with its batch recorded as submitting, before the create reached the
        provider (which never creates it)."""
        srv = self.srv
        n, dropped = srv.create_requests, srv.creates_dropped
        srv.create_gate_s = 2.0
        kill_when(self._child(), lambda: srv.create_requests > n, "the job never created")
        srv.drop_create = True
        deadline = time.monotonic() + 30
        while srv.creates_dropped == dropped:
            assert time.monotonic() < deadline, "the create was never dropped"
            time.sleep(0.02)
        srv.create_gate_s, srv.drop_create = 0.0, False

    def killed_after_create(self) -> None:
        """Killed after the provider created its batch, before it learnt the batch's id."""
        n = len(self.srv.created)
        self.srv.create_delay = 2.0
        kill_when(self._child(), lambda: len(self.srv.created) > n, "the job never created")
        self.srv.create_delay = 0.0

    def stopped_after_record(self) -> None:
        """The batch created and recorded, not yet collected (it is still running)."""
        hold, self.srv.hold = self.srv.hold, True
        s = self.judge()
        assert s.submitted == PAIRS and s.in_flight == PAIRS, s
        self.srv.hold = hold

    def judge(self) -> JudgeStats:
        report = pipeline.judge(Project(load_config(self.cfg)), None, [self.sid], progress=QUIET)
        return report.judges["gpt"]

    def rerun_until_done(self) -> None:
        for _ in range(3):
            if self.judge().in_flight == 0:
                break
        keys = verdict_keys(self.root)
        assert len(keys) == len(set(keys)) == PAIRS  # each verdict stored once, none missing

    def collected(self) -> list[str]:
        """The ids of the batches this job's ledger records as collected (once per row)."""
        return [bid for bid, state in batch_rows(self.root) if state == "collected"]


def _jobs(srv: FakeBatchServer, tmp: Path, provider: str, sids: tuple[str, ...]) -> list[Job]:
    return [Job(srv, tmp / f"job{i}", provider, sid) for i, sid in enumerate(sids, 1)]


def _paid(srv: FakeBatchServer, jobs: list[Job]) -> None:
    """Every batch on the account collected by a job whose requests it carries, never twice
    in one ledger; no request paid that a job did not ask once."""
    paid, pairs = sum(srv.batch_sizes()), PAIRS * len(jobs)
    assert paid == pairs, f"{paid} requests paid for {pairs} pairs in {len(srv.created)} batches"
    for bid in srv.created:
        ids = {cid for cid, _ in srv.batches[bid].parsed()}
        by = [j.sid for j in jobs if bid in j.collected()]
        assert by, f"batch {bid} was never collected"
        for j in jobs:
            assert j.collected().count(bid) <= 1, (bid, j.sid)
            if bid in j.collected():  # by a job whose requests they are
                assert ids <= {k.hex() for k in verdict_keys(j.root)}, (bid, j.sid)


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("skew", [-300.0, 90.0, 300.0])
def test_two_jobs_killed_after_create_each_collect_their_own(
    tmp_path: Path, provider: str, skew: float
) -> None:
    with FakeBatchServer(responder=hashed_verdict) as srv:
        srv.clock_skew_s = skew
        jobs = _jobs(srv, tmp_path, provider, SUBMISSIONS[:2])
        for j in jobs:
            j.killed_after_create()
        assert len(srv.created) == 2
        for j in reversed(jobs):  # the later job first: its clock is nearer the other's batch
            s = j.judge()
            assert s.submitted == 0 and s.judged == PAIRS and s.ignored_results == 0, s
        _paid(srv, jobs)
        assert len(srv.created) == 2


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("skew", [-300.0, 300.0])
def test_three_jobs_killed_at_each_step(tmp_path: Path, provider: str, skew: float) -> None:
    """One job killed before its create reached the provider, one after, one after recording
    its batch: the first asks again (its record is lost, not taken for another's batch)."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        srv.clock_skew_s = skew
        first, second, third = jobs = _jobs(srv, tmp_path, provider, SUBMISSIONS)
        first.killed_before_create()
        second.killed_after_create()
        third.stopped_after_record()
        assert len(srv.created) == 2
        for j in jobs:
            j.rerun_until_done()
        _paid(srv, jobs)
        assert len(srv.created) == 3  # the first job's batch, created by its rerun


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_no_batch_adopted_while_it_cannot_be_shown(tmp_path: Path, provider: str) -> None:
    """While the batches still run, a Message Batch shows no request id: the record waits in
    flight (nothing asked again, nothing adopted) until they end."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        srv.clock_skew_s = 90.0
        srv.hold = True  # (a run's sweep of the listing would otherwise see them end)
        jobs = _jobs(srv, tmp_path, provider, SUBMISSIONS[:2])
        for j in jobs:
            j.killed_after_create()
        for j in jobs:
            s = j.judge()
            assert s.submitted == 0 and s.in_flight == PAIRS and s.judged == 0, s
            states = {state for _, state in batch_rows(j.root)}
            # a Message Batch cannot be shown before it ends; OpenAI's metadata shows it now
            assert ("created" in states) is (provider == "openai"), states
        srv.release()
        for j in jobs:
            j.rerun_until_done()
        _paid(srv, jobs)


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_two_jobs_that_asked_the_same_requests_collect_both_batches(
    tmp_path: Path, provider: str
) -> None:
    """Two copies of one job (the same submission) and another job: each copy collects both
    batches of its requests, once each, so no paid batch is left unread."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        srv.clock_skew_s = -90.0
        srv.hold = True  # still running: the copy cannot adopt the first's batch by its sweep
        jobs = _jobs(srv, tmp_path, provider, ("s1", "s2", "s1"))
        for j in jobs:
            j.killed_after_create()
        srv.release()
        for j in jobs:
            j.rerun_until_done()
        _paid(srv, jobs)
        a, b, c = srv.created
        if provider == "anthropic":  # shown by their results: both batches of s1's requests
            assert sorted(jobs[0].collected()) == sorted(jobs[2].collected()) == sorted([a, c])
        else:  # shown by the tag each run sent: its own
            assert jobs[0].collected() == [a] and jobs[2].collected() == [c]
        assert jobs[1].collected() == [b]
