"""Batches that no ledger copy names: jobs killed between creating a batch and recording its id,
whose ledger copies are then gone. A run sweeps the provider's batch listing (paged) and adopts
each finished batch shown to carry its open requests, collecting it once; a second sweep
collects nothing new; a batch that carries requests the run does not plan (another benchmark's,
or a submission it does not judge) is left alone; a batch whose results are gone fails alone.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import anthropic
import openai
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.outcome import JudgeStats
from tests.fakes.batch_server import FakeBatchServer
from tests.judge.project import RUBRICS, write_project
from tests.judge.store import batch_rows, verdict_keys
from tests.judge.test_batch import batch_judge, hashed_verdict
from tests.judge.test_batch_recovery import PAIRS, QUIET, RESPONSES, SUBMISSIONS, Job

pytestmark = pytest.mark.slow


def lost(srv: FakeBatchServer, tmp: Path, provider: str, sids: tuple[str, ...]) -> list[str]:
    """Jobs (one per submission, each with its own ledger copy) killed after the provider
    created their batch, before they learnt its id; their copies are never used again.
    Returns the ids of their batches."""
    for i, sid in enumerate(sids, 1):
        Job(srv, tmp / f"lost{i}", provider, sid).killed_after_create()
    assert len(srv.created) == len(sids)
    return list(srv.created)


class Fresh:
    """A run on a fresh ledger copy of the same benchmark, judging ``sids``."""

    def __init__(self, srv: FakeBatchServer, root: Path, provider: str) -> None:
        self.root = root
        self.cfg = write_project(root, batch_judge(srv, provider=provider), responses=RESPONSES)

    def judge(self, sids: tuple[str, ...]) -> JudgeStats:
        report = pipeline.judge(Project(load_config(self.cfg)), None, list(sids), progress=QUIET)
        return report.judges["gpt"]

    def collected(self) -> list[str]:
        return [bid for bid, state in batch_rows(self.root) if state == "collected"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("n", [2, 3])
def test_a_sweep_collects_each_lost_batch_once(tmp_path: Path, provider: str, n: int) -> None:
    with FakeBatchServer(responder=hashed_verdict) as srv:
        made = lost(srv, tmp_path, provider, SUBMISSIONS[:n])
        run = Fresh(srv, tmp_path / "fresh", provider)
        pages = srv.list_requests
        s = run.judge(SUBMISSIONS[:n])
        assert s.submitted == 0 and s.judged == PAIRS * n and s.batches_collected == n, s
        assert s.ignored_results == 0 and s.in_flight == 0, s
        assert f"adopted {n} unrecorded batch(es)" in "\n".join(s.notes)
        assert sorted(run.collected()) == sorted(made)
        keys = verdict_keys(run.root)
        assert len(keys) == len(set(keys)) == PAIRS * n
        again = run.judge(SUBMISSIONS[:n])  # everything judged: nothing to look for
        assert again.judged == again.batches_collected == again.submitted == 0, again
        assert sorted(run.collected()) == sorted(made) and len(srv.created) == n
        assert srv.list_requests == pages + 1  # one listing page (of 100) swept, once


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_sweep_adopts_only_what_the_run_plans(tmp_path: Path, provider: str) -> None:
    """A run judging one submission leaves the others' batches alone (their results have
    no home in it) and a later run judging them adopts them: each collected once."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        first, second, third = lost(srv, tmp_path, provider, SUBMISSIONS)
        run = Fresh(srv, tmp_path / "fresh", provider)
        s = run.judge(SUBMISSIONS[1:2])
        assert s.submitted == 0 and s.judged == PAIRS and s.ignored_results == 0, s
        assert run.collected() == [second]
        s = run.judge(SUBMISSIONS)
        assert s.submitted == 0 and s.judged == 2 * PAIRS and s.ignored_results == 0, s
        assert sorted(run.collected()) == sorted([first, second, third])
        keys = verdict_keys(run.root)
        assert len(keys) == len(set(keys)) == 3 * PAIRS and len(srv.created) == 3


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_another_benchmarks_batch_is_left_alone(tmp_path: Path, provider: str) -> None:
    """The same account, another benchmark (other checks, so other keys) killed after its
    create: the sweep does not take it, and that job's own rerun still collects it."""
    other = copy.deepcopy(RUBRICS)
    for r in other:
        for item in r["items"]:
            if "text" in item:
                item["text"] += " (other benchmark)"
    with FakeBatchServer(responder=hashed_verdict) as srv:
        theirs = Job(srv, tmp_path / "other", provider, "s1", rubrics=other)
        theirs.killed_after_create()
        (foreign,) = srv.created
        run = Fresh(srv, tmp_path / "fresh", provider)
        s = run.judge(("s1",))
        assert s.submitted == PAIRS and foreign not in {b for b, _ in batch_rows(run.root)}, s
        assert run.judge(("s1",)).judged == PAIRS and foreign not in run.collected()
        t = theirs.judge()
        assert t.submitted == 0 and t.judged == PAIRS, t  # its own batch, still there
        assert theirs.collected() == [foreign]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_lost_batch_whose_results_are_gone_fails_alone(tmp_path: Path, provider: str) -> None:
    with FakeBatchServer(responder=hashed_verdict) as srv:
        first, gone, third = lost(srv, tmp_path, provider, SUBMISSIONS)
        srv.gone = {gone}
        run = Fresh(srv, tmp_path / "fresh", provider)
        s = run.judge(SUBMISSIONS)
        assert f"cannot read the results of unrecorded batch {gone}" in "\n".join(s.notes), s
        assert s.batches_collected == 2 and s.judged == 2 * PAIRS, s
        assert s.submitted == PAIRS and s.in_flight == PAIRS, s  # its requests, asked again
        assert sorted(run.collected()) == sorted([first, third])
        s = run.judge(SUBMISSIONS)
        assert s.judged == PAIRS and s.in_flight == 0, s
        keys = verdict_keys(run.root)
        assert len(keys) == len(set(keys)) == 3 * PAIRS
        assert gone not in {b for b, _ in batch_rows(run.root)}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_listing_is_read_page_by_page_within_a_bound(
    tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of one batch, two pages at most: the two newest lost batches are adopted, the
    oldest is past the bound (its requests are asked again)."""
    monkeypatch.setattr("scoring.judge.batch.runner.SWEEP_PAGES", 2)
    monkeypatch.setattr("scoring.judge.batch.runner.SWEEP_PAGE_SIZE", 1)
    with FakeBatchServer(responder=hashed_verdict) as srv:
        oldest, *newest = lost(srv, tmp_path, provider, SUBMISSIONS)
        assert oldest not in newest
        run = Fresh(srv, tmp_path / "fresh", provider)
        pages = srv.list_requests
        s = run.judge(SUBMISSIONS)
        assert srv.list_requests - pages == 2
        assert sorted(run.collected()) == sorted(newest) and s.submitted == PAIRS, s
        assert oldest not in {b for b, _ in batch_rows(run.root)}


def _other_projects_batch(srv: FakeBatchServer, provider: str) -> str:
    """A batch made on the account by another tool through the provider's own SDK: its custom
    ids are not keys (and on OpenAI it even carries a metadata key like this project's)."""
    msgs = [{"role": "user", "content": "Say hi."}]
    if provider == "anthropic":
        a = anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="sk-other")
        reqs = [
            {"custom_id": f"other-{i}", "params": {"model": "m", "max_tokens": 9, "messages": msgs}}
            for i in range(3)
        ]
        made = a.messages.batches.create(requests=reqs).id  # type: ignore[arg-type]
        return a.messages.batches.retrieve(made).id  # (the fake runs it when it is looked at)
    o = openai.OpenAI(base_url=srv.openai_base_url, api_key="sk-other")
    lines = [
        {"custom_id": f"other-{i}", "method": "POST", "url": "/v1/chat/completions"}
        | {"body": {"model": "m", "messages": msgs}}
        for i in range(3)
    ]
    data = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines).encode()
    f = o.files.create(file=("other.jsonl", data), purpose="batch")
    made = o.batches.create(
        input_file_id=f.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"gamut_chunk": "theirs"},
    ).id
    return o.batches.retrieve(made).id


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_another_projects_batch_is_read_by_one_sweep_only(tmp_path: Path, provider: str) -> None:
    """Recorded ``foreign`` (no keys) by the first sweep, so the next sweep skips it."""
    with FakeBatchServer(responder=hashed_verdict) as srv:
        other = _other_projects_batch(srv, provider)
        run = Fresh(srv, tmp_path / "fresh", provider)
        srv.hold = True  # its own batch stays in flight: the next run sweeps again
        s = run.judge(("s1",))
        assert s.submitted == PAIRS and (other, "foreign") in batch_rows(run.root), s
        srv.gone = {other}  # read again, it would fail
        pages = srv.list_requests
        s = run.judge(("s1",))
        assert srv.list_requests == pages + 1 and s.in_flight == PAIRS, s
        assert not [n for n in s.notes if other in n], s.notes
