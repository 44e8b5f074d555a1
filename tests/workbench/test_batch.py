"""`gamut-workbench build` LLM steps in batch mode (a judge with ``mode = "batch"``): the real
OpenAI and Anthropic SDKs against the fake batch provider on 127.0.0.1, through the command
line; each run collects what finished and submits what is new."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.llm_server import prompt_text
from tests.judge.project import openai_judge
from tests.workbench.helpers import write_config
from tests.workbench.test_provider_llm import KEY, _project, _proposals
from workbench.batch import BATCHES
from workbench.cli import main
from workbench.demo import demo_before_guard, demo_data, run_demo
from workbench.llm import ReplayLLM
from workbench.questions import CANDIDATES, entered_questions, guard
from workbench.store import RUBRIC_STATUS, Workbench

BATCH = 'mode = "batch"\nbatch_price_in_per_mtok = 1.0\nbatch_price_out_per_mtok = 4.0\n'


@pytest.fixture
def srv() -> Iterator[FakeBatchServer]:
    s = FakeBatchServer(responder=_proposals)
    s.start()
    try:
        yield s
    finally:
        s.stop()


def _base(srv: FakeBatchServer, provider: str) -> str:
    return srv.openai_base_url if provider == "openai" else srv.anthropic_base_url


def _build(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["build", *args], env={"GAMUT_TEST_KEY": KEY})
    return result.exit_code, result.output


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_propose_submits_a_batch_and_the_next_run_collects_it(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    cfg = _project(tmp_path, openai_judge(_base(srv, provider), provider=provider, extra=BATCH))
    srv.hold = True
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0, out
    assert "submitted 4 request(s) in 1 batch(es); 4 in flight" in out
    assert "run `gamut-workbench build propose` again to collect them" in out
    assert srv.requests == []  # no direct call
    assert srv.batch_sizes() == [4]
    for _, body in srv.bodies():
        assert body["model"] == "judge-model"
        native = body.get("response_format") or body["output_config"]["format"]
        assert native["type"] == "json_schema"
        assert "Write 2 candidate questions." in prompt_text(body)
    wb = tmp_path / "wb"
    assert not (wb / "candidates.json").exists() or not json.loads(
        (wb / "candidates.json").read_text(encoding="utf-8")
    )
    # still running: nothing collected, nothing submitted twice
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0, out
    assert "collected 0 repl(ies), submitted 0 request(s) in 0 batch(es); 4 in flight" in out
    assert srv.batch_sizes() == [4]
    code, out = _build("status", "--json", "--config", cfg)
    assert json.loads(out)["batch_requests_in_flight"] == 4
    srv.release()
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0, out
    assert "collected 4 repl(ies)" in out and "proposed candidates for 4 image(s)" in out
    assert "waiting" not in out
    cands = json.loads((wb / "candidates.json").read_text(encoding="utf-8"))
    assert len(cands) == 8 and {c["state"] for c in cands.values()} == {"in_review"}
    code, out = _build("status", "--json", "--config", cfg)
    row = json.loads(out)["llm_usage"]["propose"]["batch"]
    assert row["requests"] == 4 and row["tokens_in"] > 0 and row["tokens_out"] > 0
    usd = (row["tokens_in"] * 1.0 + row["tokens_out"] * 4.0) / 1e6
    assert row["cost_usd"] == pytest.approx(usd)
    state = json.loads((wb / BATCHES).read_text(encoding="utf-8"))
    assert {b["state"] for b in state["batches"].values()} <= {"collected", "created"}
    assert srv.batch_sizes() == [4] and srv.requests == []


def test_a_refused_request_fails_its_step_once_and_is_asked_again(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    cfg = _project(tmp_path, openai_judge(srv.openai_base_url, extra=BATCH))
    srv.line_fault_fn = lambda cid, body: "400" if "Domain: food" in prompt_text(body) else None
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0 and srv.batch_sizes() == [4], out
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 1, out
    assert "batch request failed (HTTP 400" in out and "rubrics are held" in out
    assert "Write 2" not in out and "Domain:" not in out  # the provider quoted the prompt back
    srv.line_fault_fn = None
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0, out
    assert srv.batch_sizes() == [4, 1]  # only the refused request is asked again
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0 and "proposed candidates for 1 image(s)" in out, out


def _drafting(tmp_path: Path, base: str, provider: str) -> tuple[str, Workbench]:
    """A workbench at the draft step (the demo's, its drafts removed), with a batch judge."""
    run_demo(tmp_path / "demo")
    wb = Workbench(tmp_path / "demo" / "workbench")
    wb.path(RUBRIC_STATUS).unlink()
    shutil.rmtree(wb.path("drafts"))
    shutil.rmtree(wb.path("rubrics"))
    return _batch_config(tmp_path, wb, base, provider), wb


def _batch_config(tmp_path: Path, wb: Workbench, base: str, provider: str) -> str:
    """A configuration of the workbench ``wb`` with a batch-mode judge (the fake provider)."""
    cfg = write_config(tmp_path, workbench=str(wb.root))
    judge = openai_judge(base, provider=provider, extra=BATCH)
    cfg.write_text(cfg.read_text(encoding="utf-8") + "\n" + judge, encoding="utf-8")
    return str(cfg)


def _recorded() -> dict[tuple[str, str], Any]:
    out = {}
    for line in (demo_data() / "llm.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out[(r["template"], r["key"])] = r["reply"]
    return out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_draft_in_batches_with_its_repair_in_a_second_batch(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    cfg, wb = _drafting(tmp_path, _base(srv, provider), provider)
    questions = {q["text_only_question"]: q["question_id"] for q in entered_questions(wb)}
    recorded = _recorded()

    def answer(body: dict[str, Any]) -> str:
        text = prompt_text(body)
        (qid,) = [q for t, q in questions.items() if f"Question: {t}\n" in text]
        if "Your previous meta-rubric" in text:
            return json.dumps(recorded[("repair_v1", f"draft_v1:{qid}")])
        return json.dumps(recorded[("draft_v1", qid)])

    srv.responder = answer
    code, out = _build("draft", "--config", cfg)
    assert code == 0, out
    assert "drafted (waiting 4)" in out and "submitted 4 request(s)" in out
    code, out = _build("draft", "--config", cfg)
    assert code == 0, out
    # three drafts fit; food-0001's broke the rules, and its repair went in a second batch
    assert "drafted (ok 3, repaired 0, waiting 1)" in out and "collected 4 repl(ies)" in out
    assert srv.batch_sizes() == [4, 1]
    (_, repair), *_ = srv.bodies()[4:]
    assert "Problems:" in prompt_text(repair)
    code, out = _build("draft", "--config", cfg)
    assert code == 0, out
    assert "drafted (ok 1, repaired 1)" in out
    status = json.loads(wb.path(RUBRIC_STATUS).read_text(encoding="utf-8"))
    assert {s["draft"] for s in status.values()} == {"ok"}
    assert status["food-0001"]["draft_repairs"] == 1
    assert srv.requests == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_guard_in_batches_gives_what_the_recorded_replies_give(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    """The guard pass (questions.guard, its own path through Deferred) in batch mode: the first
    run submits one request per image, the next collects them, and the workbench ends as the
    same pass with the recorded replies leaves it."""
    wb = demo_before_guard(tmp_path / "batch")
    cfg = _batch_config(tmp_path, wb, _base(srv, provider), provider)
    first_pass = {
        key: reply
        for (template, key), reply in _recorded().items()
        if template == "guard_v1" and key.endswith("#1")
    }

    def answer(body: dict[str, Any]) -> str:  # the image whose candidates the prompt lists
        text = prompt_text(body)
        (reply,) = [
            r for r in first_pass.values()
            if all(f"{c['candidate_id']}: " in text for c in r["checks"])
        ]  # fmt: skip
        return json.dumps(reply)

    replayed = demo_before_guard(tmp_path / "replayed")
    counts = guard(replayed, ReplayLLM(demo_data() / "llm.jsonl"))
    n = sum(counts.values())  # the images whose candidates are settled, some accepted
    assert n >= 2
    srv.responder = answer
    code, out = _build("guard", "--config", cfg)
    assert code == 0, out
    assert f"guarded (waiting {n})" in out and f"submitted {n} request(s) in 1 batch(es)" in out
    assert wb.read(CANDIDATES, {}) != replayed.read(CANDIDATES, {})  # nothing entered yet
    code, out = _build("guard", "--config", cfg)
    assert code == 0, out
    assert f"collected {n} repl(ies)" in out and "waiting" not in out
    assert wb.read(CANDIDATES, {}) == replayed.read(CANDIDATES, {})
    assert srv.batch_sizes() == [n] and srv.requests == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_created_by_a_run_killed_before_recording_it_is_found_not_resubmitted(
    tmp_path: Path, srv: FakeBatchServer, provider: str
) -> None:
    cfg = _project(tmp_path, openai_judge(_base(srv, provider), provider=provider, extra=BATCH))
    srv.hold = True
    assert _build("propose", "--per-image", "2", "--config", cfg)[0] == 0
    # as a run killed between creating the batch and recording its id leaves the state file
    path = tmp_path / "wb" / BATCHES
    state = json.loads(path.read_text(encoding="utf-8"))
    ((bid, b),) = [(k, v) for k, v in state["batches"].items() if v["state"] == "submitted"]
    del state["batches"][bid]
    state["batches"][f"pending-{b['tag']}"] = {**b, "state": "submitting"}
    for r in state["requests"].values():
        r["state"] = "queued"
        del r["batch"]
    path.write_text(json.dumps(state), encoding="utf-8")
    srv.release()
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0, out
    assert "collected 4 repl(ies), submitted 0 request(s)" in out
    assert srv.batch_sizes() == [4]  # found by its tag (OpenAI) or its size and time (Anthropic)
    cands = json.loads((tmp_path / "wb" / "candidates.json").read_text(encoding="utf-8"))
    assert len(cands) == 8


def test_a_batch_the_provider_never_created_is_lost_and_asked_again(
    tmp_path: Path, srv: FakeBatchServer
) -> None:
    cfg = _project(tmp_path, openai_judge(srv.openai_base_url, extra=BATCH))
    srv.refuse_create = True  # the upload fails: the run ends with its record "submitting"
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 1 and "cannot create the batch" in out, out
    assert "Write 2" not in out and "Domain:" not in out  # the refusal quoted the prompt
    srv.refuse_create = False
    code, out = _build("propose", "--per-image", "2", "--config", cfg)
    assert code == 0 and "submitted 4 request(s) in 1 batch(es)" in out, out
    state = json.loads((tmp_path / "wb" / BATCHES).read_text(encoding="utf-8"))
    assert sorted(b["state"] for b in state["batches"].values()) == [
        "created",
        "lost",
        "submitted",
    ]
    assert _build("propose", "--per-image", "2", "--config", cfg)[0] == 0
    assert len(json.loads((tmp_path / "wb" / "candidates.json").read_text())) == 8
