"""``gamut judge`` in batch mode and with batch files, through click's runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.batch_server import FakeBatchServer, run_batch_file
from tests.fakes.llm_server import verdict_responder
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.store import verdict_keys
from tests.judge.test_batch import batch_judge


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _rows(root: Path) -> int:
    keys = verdict_keys(root)
    assert len(keys) == len(set(keys)), "a verdict stored twice"
    return len(keys)


def test_exit_75_while_in_flight_then_0(tmp_path: Path, srv: FakeBatchServer) -> None:
    cfg = str(write_project(tmp_path, batch_judge(srv)))
    srv.hold = True
    status = tmp_path / "status.json"
    code, out = _run("judge", "--config", cfg, "--status-out", str(status))
    assert code == 75, out
    assert "still in flight" in out and f"{TOTAL_CALLS} requests in flight" in out
    prog = json.loads(status.read_text())["submissions"]
    assert prog["alpha"]["in_flight"] == 20 and prog["alpha"]["done"] == 0
    assert prog["beta"] == {"checks": 10, "done": 3, "in_flight": 7, "failed": 0}
    code, out = _run("judge", "--config", cfg)  # nothing new to submit, nothing finished
    assert code == 75 and "0 submitted" in out and len(srv.created) == 1
    srv.release()
    code, out = _run("judge", "--config", cfg, "--status-out", str(status))
    assert code == 0, out
    assert json.loads(status.read_text())["submissions"]["alpha"]["done"] == 20
    assert _rows(tmp_path) == TOTAL_CALLS


def test_wait_polls_until_done(tmp_path: Path, srv: FakeBatchServer) -> None:
    cfg = str(write_project(tmp_path, batch_judge(srv)))
    code, out = _run("judge", "--config", cfg, "--wait", "30", "--poll", "0.05")
    assert code == 0, out
    assert f"{TOTAL_CALLS} judged" in out and _rows(tmp_path) == TOTAL_CALLS


def test_a_failed_check_exits_1_and_is_listed(tmp_path: Path, srv: FakeBatchServer) -> None:
    srv.line_fault_fn = lambda cid, body: "400" if "tamarind" in json.dumps(body) else None
    cfg = str(write_project(tmp_path, batch_judge(srv)))
    code, _ = _run("judge", "--config", cfg)
    assert code == 75
    code, out = _run("judge", "--config", cfg)
    assert code == 1
    assert "gpt alpha/multimodal/food-0001/I2.m2: rejected" in out


def test_dry_run_prices_both_modes(tmp_path: Path, srv: FakeBatchServer) -> None:
    prices = (
        "price_in_per_mtok = 2.0\nprice_out_per_mtok = 8.0\n"
        "batch_price_in_per_mtok = 1.0\nbatch_price_out_per_mtok = 4.0\n"
    )
    cfg = str(
        write_project(
            tmp_path,
            batch_judge(srv, "gpt").replace('mode = "batch"\n', 'mode = "batch"\n' + prices)
            + openai_judge(srv.openai_base_url, "other", primary=False),
        )
    )
    code, out = _run("judge", "--config", cfg, "--dry-run")
    assert code == 0, out
    gpt = next(line for line in out.splitlines() if line.startswith("gpt "))
    other = next(line for line in out.splitlines() if line.startswith("other "))
    direct = float(gpt.split("direct $")[1].split(";")[0])
    batch = float(gpt.split("batch $")[1].split()[0])
    assert direct > 0 and batch == pytest.approx(direct / 2, abs=0.011)
    assert f"would make {TOTAL_CALLS} calls" in gpt and "batch mode" in gpt
    assert "direct: no prices configured; batch: no prices configured" in other
    assert srv.requests == [] and srv.created == []


def test_export_then_import_self_hosted_results(tmp_path: Path) -> None:
    cfg = str(write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1", "local")))
    out_dir = tmp_path / "requests"
    code, out = _run("judge", "--config", cfg, "--export-batch", str(out_dir))
    assert code == 0, out
    (req,) = sorted(out_dir.glob("*.jsonl"))
    lines = [json.loads(x) for x in req.read_text().splitlines()]
    assert len(lines) == TOTAL_CALLS
    assert {x["url"] for x in lines} == {"/v1/chat/completions"} and lines[0]["method"] == "POST"
    assert all(len(x["custom_id"]) == 64 for x in lines)
    good = tmp_path / "good.jsonl"
    run_batch_file(req, good, verdict_responder("meets"))

    other = tmp_path / "other-model.jsonl"
    run_batch_file(req, other, verdict_responder("meets"), model="someone-else")
    dup = tmp_path / "dup.jsonl"
    first = good.read_bytes().splitlines(keepends=True)
    dup.write_bytes(b"".join(first[:3] + first[1:2]))
    unknown = tmp_path / "unknown.jsonl"
    row = json.loads(first[0])
    row["custom_id"] = "f" * 64
    unknown.write_bytes(json.dumps(row).encode() + b"\n")
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(b"".join(first[:4]) + first[4][:40])

    code, out = _run("judge", "--config", cfg, "--import-batch", str(other), str(dup),
                     str(unknown), str(truncated))  # fmt: skip
    assert code == 1
    assert f"{other}: lines 1, 2, 3 and" in out and "someone-else" in out  # one line: summarised
    assert f"{dup}:4" in out and "appears twice (first at line 2)" in out
    assert f"{unknown}:1" in out and "unknown custom_id" in out
    assert f"{truncated}:5" in out and "truncated last line" in out
    assert "4 of 4 result file(s) refused" in out
    assert _rows(tmp_path) == 0

    half = tmp_path / "half.jsonl"
    half.write_bytes(b"".join(first[:10]))
    code, out = _run("judge", "--config", cfg, "--import-batch", str(half), str(truncated))
    assert code == 1 and _rows(tmp_path) == 10  # the good file went in, the bad one did not
    code, out = _run("judge", "--config", cfg, "--import-batch", str(good))
    assert code == 0, out
    assert f"{TOTAL_CALLS - 10} verdict(s) ingested" in out
    assert "10 result(s) already ingested" in out
    code, out = _run("judge", "--config", cfg, "--import-batch", str(good))
    assert code == 0 and "0 verdict(s) ingested" in out and _rows(tmp_path) == TOTAL_CALLS
    shutil.rmtree(out_dir)
    code, out = _run("judge", "--config", cfg, "--export-batch", str(out_dir))
    assert code == 0 and "local: 0 request(s) in 0 file(s)" in out


def test_an_unusable_imported_reply_is_asked_again_in_the_next_export(tmp_path: Path) -> None:
    cfg = str(write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1", "local")))
    d1, d2 = tmp_path / "r1", tmp_path / "r2"
    assert _run("judge", "--config", cfg, "--export-batch", str(d1))[0] == 0
    (req,) = d1.glob("*.jsonl")
    res = tmp_path / "res.jsonl"
    run_batch_file(req, res, lambda body: "not json at all")
    code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
    assert code == 0 and f"{TOTAL_CALLS} unusable repl(ies) to ask again" in out, out
    assert _run("judge", "--config", cfg, "--export-batch", str(d2))[0] == 0
    (again,) = d2.glob("*.jsonl")
    assert again.name.startswith("local-2-")  # the second attempt
    body = json.loads(again.read_text().splitlines()[0])["body"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][2]["content"] == "not json at all"


#: The calls of alpha alone (beta's are those of a submission left out).
ALPHA_CALLS = 20


def _leave_out_beta(root: Path) -> None:
    """Make beta fail validation: a merged folder that lacks its metadata."""
    (root / "submissions" / "beta" / "submission.yaml").unlink()


def test_a_submission_left_out_exits_1_even_with_batches_in_flight(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    cfg = str(write_project(tmp_path, batch_judge(srv)))
    _leave_out_beta(tmp_path)
    srv.hold = True
    status = tmp_path / "status.json"
    code, out = _run("judge", "--config", cfg, "--status-out", str(status))
    assert code == 1, out  # 75 only when nothing else is wrong
    assert f"{ALPHA_CALLS} request(s) still in flight" in out  # still said
    assert "submissions/beta/submission.yaml: missing submission.yaml" in out
    assert "(the rest is judged): 'beta'" in out
    assert set(json.loads(status.read_text())["submissions"]) == {"alpha"}
    srv.release()
    code, out = _run("judge", "--config", cfg)
    assert code == 1 and "still in flight" not in out, out
    assert _rows(tmp_path) == ALPHA_CALLS


def test_dry_run_export_and_import_leave_out_a_submission_that_fails_validation(
    tmp_path: Path,
) -> None:
    cfg = str(write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1", "local")))
    _leave_out_beta(tmp_path)
    status = tmp_path / "status.json"
    code, out = _run("judge", "--config", cfg, "--dry-run", "--status-out", str(status))
    assert code == 1 and f"would make {ALPHA_CALLS} calls" in out, out
    assert "(the rest is judged): 'beta'" in out
    assert set(json.loads(status.read_text())["submissions"]) == {"alpha"}
    out_dir = tmp_path / "requests"
    code, out = _run("judge", "--config", cfg, "--export-batch", str(out_dir))
    assert code == 1 and f"local: {ALPHA_CALLS} request(s) in 1 file(s)" in out, out
    (req,) = out_dir.glob("*.jsonl")
    res = tmp_path / "res.jsonl"
    run_batch_file(req, res, verdict_responder("meets"))
    code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
    assert code == 1 and f"{ALPHA_CALLS} verdict(s) ingested" in out, out
    assert "(the rest is judged): 'beta'" in out
    assert _rows(tmp_path) == ALPHA_CALLS
