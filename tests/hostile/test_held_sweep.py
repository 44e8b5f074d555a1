"""With held rubrics, no failure path carries a check's text to any output.

Held strings are planted where a judge or a provider can put them: in the reply (an extra key of
the verdict object, the verdict word, prose, a list), in the HTTP body around it, in a
provider's error body (message and error type, for rejected and transient errors) and in what
an exception says about them. Every path is swept: direct mode (OpenAI and Anthropic SDKs),
batch mode (both providers' batch APIs), ``--import-batch`` (vLLM's output shape) and a
workbench LLM step; none of the held strings may reach the command's output, the ledger, the
working index or any other file the run wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.batch_server import FakeBatchServer, run_batch_file
from tests.fakes.llm_server import FakeLLMServer, RecordedRequest
from tests.judge.project import RUBRICS, check_of, openai_judge, write_project
from tests.judge.test_batch import batch_judge
from workbench.llm import LLMError, LLMRequest, ask
from workbench.questions import Proposal

Reply = Callable[[dict[str, Any]], str]

#: A judge talked into echoing the check, in each shape a reply can take.
REPLIES: dict[str, Reply] = {
    "extra key": lambda b: json.dumps({"verdict": "meets", "rationale": "ok", check_of(b): True}),
    "verdict word": lambda b: json.dumps({"verdict": check_of(b), "rationale": "ok"}),
    "rationale object": lambda b: json.dumps({"verdict": "meets", "rationale": {check_of(b): 1}}),
    "prose": lambda b: f"The check {check_of(b)!r} is met, I would say.",
    "list": lambda b: json.dumps([check_of(b)]),
    "fenced extra key": lambda b: "```json\n" + json.dumps({check_of(b): "meets"}) + "\n```",
}
#: A provider quoting the prompt back in its error body (status and type too).
ERRORS = ("400_echo", "404_echo", "422_echo", "429_echo", "500_echo")


def _held_texts() -> list[str]:
    out: list[str] = []
    for r in RUBRICS:
        for item in r["items"]:
            assert isinstance(item, dict)
            out += [item.get("text", ""), *item.get("members", []), *item.get("aspects", [])]
    return [t for t in out if t]


def _written(root: Path) -> bytes:
    """Every byte the run wrote (the inputs excepted, and an export's request files, which
    hold the checks by design and are private)."""
    skip = {"rubrics", "submissions"}
    return b"".join(
        p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not skip & set(p.parts) and "-requests" not in p.parent.name
    )


def _assert_clean(out: str, root: Path, asked: list[str]) -> None:
    assert asked, "no held check was sent: the sweep tested nothing"
    written = _written(root)
    for text in {*_held_texts(), *asked}:
        assert text not in out, f"held text printed: {text!r}"
        assert text.encode() not in written, f"held text stored: {text!r}"


def _judge(cfg: Path, *extra: str) -> str:
    r = CliRunner().invoke(main, ["judge", "--config", str(cfg), *extra])
    assert r.exit_code in (1, 75), r.output  # failures are listed, never a crash
    assert "Traceback" not in r.output
    return r.output


def _direct(tmp_path: Path, provider: str, srv: FakeLLMServer) -> str:
    base = srv.anthropic_base_url if provider == "anthropic" else srv.openai_base_url
    cfg = write_project(tmp_path, openai_judge(base, provider=provider, retries=1), public=False)
    return _judge(cfg)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("case", list(REPLIES))
def test_direct_replies_echoing_the_check(tmp_path: Path, provider: str, case: str) -> None:
    with FakeLLMServer(responder=REPLIES[case]) as srv:
        out = _direct(tmp_path, provider, srv)
        asked = [check_of(r.body) for r in srv.requests]
    assert "failed" in out and "re-asks" in out
    _assert_clean(out, tmp_path, asked)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", ERRORS)
def test_direct_error_bodies_quoting_the_prompt(tmp_path: Path, provider: str, fault: str) -> None:
    with FakeLLMServer() as srv:
        srv.fault_fn = lambda req: fault
        srv.echo_word = "tofu"  # a held member as the error's type, code and param
        out = _direct(tmp_path, provider, srv)
        asked = [check_of(r.body) for r in srv.requests]
    assert f"HTTP {fault[:3]}" in out  # the status is kept: it is no input's text
    if fault not in ("429_echo", "500_echo"):  # the same refusal every time: stopped early
        assert "stopped" in out and len(asked) <= 10, out
    _assert_clean(out, tmp_path, asked)


def _unusable_body(req: RecordedRequest, payload: dict[str, Any]) -> bytes:
    check = check_of(req.body)
    return json.dumps({**payload, "usage": {"prompt_tokens": check}}).encode()[:-2] + b", {"


def test_direct_unusable_bodies_quoting_the_prompt(tmp_path: Path) -> None:
    with FakeLLMServer() as srv:
        srv.reply_hook = _unusable_body
        out = _direct(tmp_path, "openai", srv)
        asked = [check_of(r.body) for r in srv.requests]
    _assert_clean(out, tmp_path, asked)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("case", ["extra key", "verdict word", "prose"])
def test_batch_replies_and_refusals_echoing_the_check(
    tmp_path: Path, provider: str, case: str
) -> None:
    with FakeBatchServer(responder=REPLIES[case]) as srv:
        srv.line_fault_fn = lambda cid, body: "400" if "tamarind" in check_of(body) else None
        cfg = write_project(tmp_path, batch_judge(srv, provider=provider), public=False)
        out = _judge(cfg)
        for _ in range(4):  # collect, then the re-asks in their own batches
            out += _judge(cfg)
        asked = [check_of(b) for _, b in srv.bodies()]
    assert "bad_output" in out and "rejected" in out
    _assert_clean(out, tmp_path, asked)


@pytest.mark.parametrize("case", ["extra key", "verdict word", "rationale object"])
def test_imported_vllm_replies_echoing_the_check(tmp_path: Path, case: str) -> None:
    cfg = write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1", "local"), public=False)
    out, asked = "", []
    for n in range(3):  # export, answer, import: until the re-asks are spent and failures stored
        out_dir = tmp_path.parent / f"{tmp_path.name}-requests{n}"
        r = CliRunner().invoke(
            main, ["judge", "--config", str(cfg), "--export-batch", str(out_dir)]
        )
        assert r.exit_code == 0, r.output
        (requests,) = out_dir.glob("*.jsonl")
        asked += [check_of(json.loads(x)["body"]) for x in requests.read_text().splitlines()]
        results = tmp_path.parent / f"{tmp_path.name}-results.jsonl"
        run_batch_file(requests, results, REPLIES[case])
        r = CliRunner().invoke(
            main, ["judge", "--config", str(cfg), "--import-batch", str(results)]
        )
        assert "Traceback" not in r.output
        out += r.output
        results.unlink()
    assert "27 failed" in out
    _assert_clean(out, tmp_path, asked)


def test_a_workbench_step_never_quotes_its_reply() -> None:
    secret = "Identifies the dish as pad thai."

    class Echo:
        def complete(self, request: LLMRequest) -> object:
            return {secret: True, "questions": [{secret: 1}]}

    with pytest.raises(LLMError) as exc:
        ask(
            Echo(),
            "propose_v1",
            "k",
            {"k": "2", "domain": "d", "entity": "e", "avoid": ""},
            Proposal,
        )
    assert "propose_v1 reply for k" in str(exc.value) and secret not in str(exc.value)


@pytest.mark.parametrize("public", [False, True])
def test_an_unforeseen_error_quoting_a_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, public: bool
) -> None:
    """A bug whose message quotes a check (none is known: one is made by patching the step)."""
    secret = "Identifies the dish as pad thai."

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError(secret)

    monkeypatch.setattr("gamut.pipeline.score", broken)
    cfg = write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1"), public=public)
    r = CliRunner().invoke(main, ["score", "--config", str(cfg)])
    if public:  # a crash as Python shows it
        assert isinstance(r.exception, KeyError) and secret in str(r.exception)
        return
    assert r.exit_code == 1 and "internal error: KeyError" in r.output
    assert "test_held_sweep.py" in r.output  # where it was raised
    assert secret not in r.output


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_swept_batch_echoing_the_check(tmp_path: Path, provider: str) -> None:
    """Two jobs killed after creating their batches, their ledger copies gone; a fresh copy's
    sweep adopts the one whose replies echo the check (and refusals quote it) and fails on the
    one whose results are gone: neither prints nor stores held text."""
    from tests.judge.test_batch_recovery import Job

    with FakeBatchServer(responder=REPLIES["extra key"]) as srv:
        srv.line_fault_fn = lambda cid, body: "400" if "tamarind" in check_of(body) else None
        for sid in ("alpha", "beta"):
            job = Job(srv, tmp_path / f"lost-{sid}", provider, sid, public=False, responses=None)
            job.killed_after_create()
        srv.gone = {srv.created[1]}
        root = tmp_path / "fresh"
        cfg = write_project(root, batch_judge(srv, provider=provider), public=False)
        out = _judge(cfg)
        assert f"cannot read the results of unrecorded batch {srv.created[1]}" in out, out
        assert f"adopted 1 unrecorded batch(es): {srv.created[0]}" in out, out
        for _ in range(4):  # the re-asks and the gone batch's requests, in their own batches
            out += _judge(cfg)
        asked = [check_of(b) for _, b in srv.bodies()]
    assert "bad_output" in out and "rejected" in out
    _assert_clean(out, root, asked)
