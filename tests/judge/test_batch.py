"""Batch mode end to end: real SDKs over real HTTP to the fake batch service."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.batch.api import batch_backend
from scoring.judge.batch.book import BatchBook
from scoring.judge.progress import NullProgress
from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.llm_server import FakeLLMServer, prompt_text
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.store import verdict_keys, verdict_words

QUIET = NullProgress()
VERDICTS = ("meets", "partially_meets", "missing", "contradicts")


def hashed_verdict(body: dict[str, Any]) -> str:
    """A verdict that depends only on the first-ask prompt text (the same in both modes)."""
    h = int(hashlib.sha256(prompt_text(body).encode()).hexdigest()[:8], 16)
    return json.dumps({"verdict": VERDICTS[h % 4], "rationale": f"Reason {h % 97}."})


def batch_judge(
    srv: FakeBatchServer, name: str = "gpt", provider: str = "openai", **kw: Any
) -> str:
    base = srv.anthropic_base_url if provider == "anthropic" else srv.openai_base_url
    extra = 'mode = "batch"\n' + "".join(f"{k} = {v}\n" for k, v in kw.items())
    return openai_judge(base, name, provider=provider, extra=extra)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_verdict_does_not_depend_on_the_mode(
    tmp_path: Path, batch_srv: FakeBatchServer, provider: str
) -> None:
    with FakeLLMServer(responder=hashed_verdict) as direct_srv:
        base = (
            direct_srv.anthropic_base_url if provider == "anthropic" else direct_srv.openai_base_url
        )
        d_cfg = write_project(tmp_path / "direct", openai_judge(base, provider=provider))
        d = pipeline.judge(Project(load_config(d_cfg)), progress=QUIET)
        assert d.ok and d.judges["gpt"].judged == TOTAL_CALLS
        direct_bodies = sorted(json.dumps(r.body, sort_keys=True) for r in direct_srv.requests)
    b_cfg = write_project(tmp_path / "batch", batch_judge(batch_srv, provider=provider))
    first = pipeline.judge(Project(load_config(b_cfg)), progress=QUIET)
    s = first.judges["gpt"]
    assert s.submitted == TOTAL_CALLS and s.batches_submitted == 1 and s.in_flight == TOTAL_CALLS
    assert s.judged == 0  # submitted, not yet collected
    second = pipeline.judge(Project(load_config(b_cfg)), progress=QUIET)
    s = second.judges["gpt"]
    assert second.ok and s.judged == TOTAL_CALLS and s.in_flight == 0 and s.submitted == 0
    batch_bodies = sorted(json.dumps(body, sort_keys=True) for _, body in batch_srv.bodies())
    assert batch_bodies == direct_bodies  # one body builder for both modes
    got = verdict_words(tmp_path / "batch")
    want = verdict_words(tmp_path / "direct")
    assert got == want and len(got) == TOTAL_CALLS
    assert len(set(got.values())) > 1  # the responder's verdicts vary, so equality means something


def _judge(cfg: Path) -> Any:
    return pipeline.judge(Project(load_config(cfg)), progress=QUIET)


def _rows(root: Path) -> int:
    keys = verdict_keys(root)
    assert len(keys) == len(set(keys)), "a verdict stored twice"
    return len(keys)


def test_requests_are_split_within_the_limits(tmp_path: Path, batch_srv: FakeBatchServer) -> None:
    batch_srv.openai_max_requests = 10  # the fake refuses a bigger batch, as the provider would
    cfg = write_project(tmp_path, batch_judge(batch_srv, batch_max_requests=10))
    s = _judge(cfg).judges["gpt"]
    assert batch_srv.batch_sizes() == [10, 10, 7] and s.batches_submitted == 3
    ids = [cid for cid, _ in batch_srv.bodies()]
    assert len(ids) == len(set(ids)) == TOTAL_CALLS
    report = _judge(cfg)
    assert report.ok and report.judges["gpt"].batches_collected == 3
    assert _rows(tmp_path) == TOTAL_CALLS


def test_split_respects_bytes_and_counts() -> None:
    from scoring.judge.batch.api import BatchLine, Limits, split

    lines = [BatchLine(f"{i:064x}", 99, b"x" * 99) for i in range(10)]  # 100 bytes with newline
    assert [len(c) for c in split(lines, Limits(4, 10_000))] == [4, 4, 2]
    assert [len(c) for c in split(lines, Limits(100, 350))] == [3, 3, 3, 1]
    assert [len(c) for c in split(lines[:2], Limits(100, 50))] == [1, 1]  # oversize: alone


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("outcome", ["expired", "cancelled"])
def test_partial_results_of_an_expired_or_cancelled_batch(
    tmp_path: Path, batch_srv: FakeBatchServer, provider: str, outcome: str
) -> None:
    cfg = write_project(tmp_path, batch_judge(batch_srv, provider=provider))
    batch_srv.outcome, batch_srv.done_fraction = outcome, 0.5
    _judge(cfg)  # submit
    second = _judge(cfg).judges["gpt"]  # collect the half that ran, resubmit the rest
    half = round(TOTAL_CALLS * 0.5)
    assert second.judged == half and second.resubmitted == TOTAL_CALLS - half
    assert second.submitted == TOTAL_CALLS - half and not second.failures
    batch_srv.outcome = "completed"
    third = _judge(cfg)
    assert third.ok and third.judges["gpt"].judged == TOTAL_CALLS - half
    assert batch_srv.batch_sizes() == [TOTAL_CALLS, TOTAL_CALLS - half]
    assert _rows(tmp_path) == TOTAL_CALLS


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_failed_lines_reasks_and_transient_errors(
    tmp_path: Path, batch_srv: FakeBatchServer, provider: str
) -> None:
    from tests.judge.project import check_of

    def faults(cid: str, body: dict[str, Any]) -> str | None:
        check = check_of(body)
        if "tamarind" in check:
            return "400"  # refused by the provider: a failure for good
        if "Monstera" in check:
            return "prose"  # never usable: re-asked twice, then a failure
        if "shrimp" in check and len(body["messages"]) <= 2:
            return "prose"  # unusable once, fine when re-asked
        if "tofu" in check and not batch_srv.created[1:]:
            return "500"  # transient: asked again without counting an attempt
        return None

    batch_srv.line_fault_fn = faults
    cfg = write_project(tmp_path, batch_judge(batch_srv, provider=provider))
    # submit; collect (re-ask, refuse, retry); collect (re-ask again); collect (give up)
    runs = [_judge(cfg) for _ in range(4)]
    last = runs[-1].judges["gpt"]
    fails = [f for r in runs for f in r.judges["gpt"].failures]
    kinds = sorted({(f.kind, f.check_id) for f in fails})
    # tamarind is member 2 of I2 in food (alpha mm, alpha text, beta mm); Monstera is plants I1
    assert ("rejected", "I2.m2") in kinds and ("bad_output", "I1") in kinds
    assert all(f.question_id == "plants-0001" for f in fails if f.kind == "bad_output")
    reask = [
        body
        for _, body in batch_srv.bodies()
        if "shrimp" in check_of(body) and len(body["messages"]) > 2
    ]
    assert reask, "the unusable reply was re-asked"
    turn = reask[0]["messages"]
    assistant = turn[-2]
    assert assistant["role"] == "assistant" and "broadly speaking" in str(assistant["content"])
    assert "JSON" in str(turn[-1]["content"])
    bad = [f for f in fails if f.kind == "bad_output"]
    assert bad and all("after 3 replies" in f.message for f in bad)
    assert last.in_flight == 0 and len(last.failures) == 5  # failed checks wait for the next run
    stored = verdict_words(tmp_path)
    assert all(k[4] != "I2.m2" or k[3] != "food-0001" for k in stored)  # no verdict invented
    assert len(stored) == TOTAL_CALLS - 2 - 3  # 2 Monstera checks (alpha mm, text) + 3 tamarind


def test_a_batch_created_but_never_recorded_is_found_not_submitted_twice(
    tmp_path: Path, batch_srv: FakeBatchServer
) -> None:
    import numpy as np

    from scoring.judge.batch.book import PENDING, BatchRecord
    from scoring.judge.batch.runner import Ask, chunk_tag, lines_of, pending_items
    from scoring.judge.items import pair_items
    from scoring.ledger.records import now

    cfg = write_project(tmp_path, batch_judge(batch_srv))
    project = Project(load_config(cfg))
    (plan,) = project.pair_plans(need_keys=True)
    j = plan.judge
    todo = pending_items(pair_items(plan, np.flatnonzero(~plan.empty)))
    api = batch_backend(j.backend)
    chunk = list(lines_of(api, todo, [Ask(c, 1) for c in todo]))
    tag = chunk_tag(chunk)
    keys = tuple(todo[ln.custom_id].key for ln in chunk)
    rec = BatchRecord(
        tag, PENDING + tag, j.name, j.identity, "openai", "submitting", keys, 1, (), now()
    )
    BatchBook(project.ledger).record(rec, with_keys=True)
    api.submit(chunk, tag)  # ... and the process dies before recording the batch's id
    api.close_batches()
    first = _judge(cfg).judges["gpt"]
    assert first.submitted == 0 and first.judged == TOTAL_CALLS  # found, collected
    assert len(batch_srv.created) == 1


def test_held_rubrics_leave_no_check_text_in_the_batch_records(
    tmp_path: Path, batch_srv: FakeBatchServer
) -> None:
    from tests.judge.project import RUBRICS

    cfg = write_project(tmp_path, batch_judge(batch_srv), public=False)
    _judge(cfg)
    status = tmp_path / "status.json"
    from click.testing import CliRunner

    from gamut.cli import main

    r = CliRunner().invoke(main, ["judge", "--config", str(cfg), "--status-out", str(status)])
    assert r.exit_code == 0, r.output
    assert _rows(tmp_path) == TOTAL_CALLS
    texts = [i["text"] for rb in RUBRICS for i in rb["items"] if "text" in i]
    texts += [m for rb in RUBRICS for i in rb["items"] for m in i.get("members", [])]
    ledger = tmp_path / ".gamut" / "ledger"
    assert list((ledger / "batches").glob("*.parquet"))
    import pyarrow.parquet as pq

    # the shards are compressed: read them back, every column of every row
    blobs = [str(pq.read_table(f).to_pylist()) for f in ledger.rglob("*.parquet")]
    blobs.append(status.read_text())
    assert any("submitting" in b for b in blobs)  # the batch records were read
    for text in texts:
        assert all(text not in b for b in blobs), text
    assert all("Reason " not in b for b in blobs)  # no rationale either
