"""Batch mode's provider errors and bad result lines, through ``gamut judge`` on the fake
batch service: with held rubrics an error is its class, HTTP status and error word only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.batch_server import FakeBatchServer
from tests.judge.project import TOTAL_CALLS, check_of, write_project
from tests.judge.store import batch_rows, verdict_keys
from tests.judge.test_batch import batch_judge


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def stored_text(root: Path) -> str:
    """Everything the run stored: every row of every ledger shard, and the working index's
    bytes (decoded leniently)."""
    parts = [str(pq.read_table(f).to_pylist()) for f in (root / ".gamut").rglob("*.parquet")]
    for f in (root / ".gamut").glob("verdicts.sqlite*"):
        parts.append(f.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("public", [False, True])
def test_a_refused_line_quotes_no_check_when_rubrics_are_held(
    tmp_path: Path, srv: FakeBatchServer, provider: str, public: bool
) -> None:
    srv.line_fault_fn = lambda cid, body: "400" if "tamarind" in check_of(body) else None
    cfg = str(write_project(tmp_path, batch_judge(srv, provider=provider), public=public))
    code, out = _run("judge", "--config", cfg)
    assert code == 75, out
    code, out = _run("judge", "--config", cfg)
    assert code == 1, out
    assert "I2.m2: rejected: " in out  # the failure is listed
    status = "HTTP 400" if provider == "openai" else ""
    assert status in out and "invalid_request_error" in out, out
    refused = {check_of(b) for _, b in srv.bodies() if "tamarind" in check_of(b)}
    assert refused and all(len(t) > 20 for t in refused)
    stored = stored_text(tmp_path)
    assert "rejected" in stored  # the failures were stored
    if public:
        assert "content rejected: " in out  # the provider's message is kept
        assert any(t[:40] in out for t in refused)
        assert "content rejected" in stored
        return
    assert "rejected: the provider refused the request" in out  # the fixed wording
    assert "content rejected" not in out and "content rejected" not in stored
    checks = {check_of(b) for _, b in srv.bodies()}
    for text in checks:
        assert text not in out and text not in stored, text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("public", [False, True])
def test_a_refused_upload_quotes_no_check_when_rubrics_are_held(
    tmp_path: Path, srv: FakeBatchServer, provider: str, public: bool
) -> None:
    srv.refuse_create = True
    cfg = str(write_project(tmp_path, batch_judge(srv, provider=provider), public=public))
    code, out = _run("judge", "--config", cfg)
    assert code == 1, out
    assert "cannot create the batch: " in out and "Traceback" not in out
    if provider == "openai":
        assert "BadRequestError" in out and "400" in out
    if public:
        assert "content rejected" in out
        return
    assert "(HTTP 400)" in out and "rubrics are held" in out
    assert "content rejected" not in out and "CHECK" not in out
    assert "content rejected" not in stored_text(tmp_path)
    srv.refuse_create = False  # the records are unchanged: the next run submits
    code, out = _run("judge", "--config", cfg)
    assert code == 75 and len(srv.created) == 1, out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_garbled_result_line_blocks_nothing(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    def faults(cid: str, body: dict[str, Any]) -> str | None:
        check = check_of(body)
        if "tamarind" in check:
            return "garbled"  # its id can be read: a failure, asked again by the next run
        if "Monstera" in check:
            return "garbled_noid"  # its id cannot: skipped, and asked again as without result
        return None

    srv.line_fault_fn = faults
    cfg = str(write_project(tmp_path, batch_judge(srv, provider=provider)))
    assert _run("judge", "--config", cfg)[0] == 75
    code, out = _run("judge", "--config", cfg)
    assert code == 1, out
    assert "I2.m2: bad_line: " in out and "is not a result (not valid JSON" in out
    where = "file batch_" if provider == "openai" else "message batch msgbatch_"
    assert where in out and " line " in out
    assert "note: " in out and "names no custom_id: skipped" in out
    # tamarind: 3 checks (alpha mm, alpha text, beta mm); Monstera: 2 (alpha mm, text)
    assert len(verdict_keys(tmp_path)) == TOTAL_CALLS - 3 - 2  # the rest was ingested
    srv.line_fault_fn = None
    for _ in range(3):
        code, out = _run("judge", "--config", cfg)
        if code == 0:
            break
    assert code == 0, out
    assert len(verdict_keys(tmp_path)) == TOTAL_CALLS
    assert len(set(verdict_keys(tmp_path))) == TOTAL_CALLS


def test_a_line_nested_too_deep_is_a_bad_line_not_a_traceback(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    from scoring.judge.batch.api import read_result_line

    notes: list[str] = []
    deep = b'{"custom_id":"' + b"a" * 64 + b'","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    def parse(obj: Any, raw: str) -> Any:
        raise AssertionError("never parsed")

    res = read_result_line(deep, "file f line 3", parse, notes)
    assert res is not None and res.error_kind == "bad_line" and res.custom_id == "a" * 64
    assert "nested 100001 levels deep" in res.message and not notes
    assert read_result_line(b"[" * 100_000, "file f line 4", parse, notes) is None
    assert notes == [
        "file f line 4 is not a result (nested 100000 levels deep (at most 32)) and names no "
        "custom_id: skipped"
    ]
    json.dumps(notes)


@pytest.mark.parametrize("public", [False, True])
def test_a_failed_batch_names_its_error_code_only_when_rubrics_are_held(
    tmp_path: Path, srv: FakeBatchServer, public: bool
) -> None:
    srv.openai_max_requests = 5  # the fake fails the whole batch, as OpenAI does
    cfg = str(write_project(tmp_path, batch_judge(srv), public=public))
    assert _run("judge", "--config", cfg)[0] == 75
    code, out = _run("judge", "--config", cfg)
    assert code == 1 and f"{TOTAL_CALLS} check(s) failed" in out, out
    if public:
        assert "rejected: batch batch_000002 failed: invalid_file" in out
        assert "too many requests: 27" in out
    else:  # the fixed wording, and the error code from the closed list
        assert "rejected: the provider refused the request: invalid_file" in out
        assert "too many requests" not in out


ALPHA, BETA = 20, 7  # requests of each test submission


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_whose_results_are_gone_fails_alone(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    """A finished batch whose results answer HTTP 404 stays in flight, recorded with its
    tries, while the others are collected; after three tries its requests are asked again,
    and the run's summary names it."""
    cfg = str(write_project(tmp_path, batch_judge(srv, provider=provider)))
    srv.hold = True
    assert _run("judge", "--config", cfg, "--submission", "alpha")[0] == 75
    assert _run("judge", "--config", cfg, "--submission", "beta")[0] == 75
    gone, _ = srv.created
    srv.gone = {gone}
    srv.release()
    for n in (1, 2):
        code, out = _run("judge", "--config", cfg)
        assert code == 75 and f"{ALPHA} requests in flight" in out, out
        assert f"cannot read the results of batch {gone} (try {n} of 3)" in out, out
        assert f"{1 if n == 1 else 0} collected" in out, out
    assert len(verdict_keys(tmp_path)) == BETA  # the other batch, collected on the first run
    code, out = _run("judge", "--config", cfg)
    assert code == 75 and f"1 batch(es) unreadable, their requests asked again: {gone}" in out
    assert f"submitted ({ALPHA} requests, {ALPHA} asked again)" in out, out
    assert len(srv.created) == 3 and srv.batch_sizes()[2] == ALPHA
    code, out = _run("judge", "--config", cfg)
    assert code == 0, out
    keys = verdict_keys(tmp_path)
    assert len(keys) == len(set(keys)) == TOTAL_CALLS
    states = {b: {st for bid, st in batch_rows(tmp_path) if bid == b} for b in srv.created}
    assert "unreadable" in states[gone] and "collected" not in states[gone]
    assert all("collected" in states[b] for b in srv.created if b != gone)


def test_a_batch_whose_error_file_is_gone_keeps_what_was_read(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    """The output file read, the error file gone: the verdicts read are stored once, and only
    the requests without one are asked again when the batch is given up."""
    cfg = str(write_project(tmp_path, batch_judge(srv)))
    srv.line_fault_fn = lambda cid, body: "500" if "tamarind" in check_of(body) else None
    assert _run("judge", "--config", cfg)[0] == 75
    (first,) = srv.created
    srv.gone = {f"{first}-err"}
    code, out = _run("judge", "--config", cfg)  # the batch ends, with errors: try 1
    assert code == 75 and "(try 1 of 3)" in out, out
    srv.line_fault_fn = None
    for _ in range(2):
        code, out = _run("judge", "--config", cfg)
    stored = len(verdict_keys(tmp_path))
    assert 0 < stored < TOTAL_CALLS and len(set(verdict_keys(tmp_path))) == stored
    assert srv.batch_sizes() == [TOTAL_CALLS, TOTAL_CALLS - stored], out
    assert _run("judge", "--config", cfg)[0] == 0
    assert len(set(verdict_keys(tmp_path))) == len(verdict_keys(tmp_path)) == TOTAL_CALLS
