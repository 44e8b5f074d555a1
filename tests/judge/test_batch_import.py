"""``gamut judge --import-batch``: vLLM's own error lines (tests/judge/fixtures/vllm/) and
hostile result files, through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.batch_server import run_batch_file
from tests.fakes.llm_server import verdict_responder
from tests.judge.project import TOTAL_CALLS, check_of, openai_judge, write_project
from tests.judge.store import failures, verdict_keys
from tests.judge.test_batch_errors import stored_text

VLLM_ERRORS = Path(__file__).parent / "fixtures" / "vllm" / "errors.jsonl"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _export(tmp_path: Path, public: bool = True) -> tuple[str, Path]:
    cfg = str(
        write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1", "local"), public=public)
    )
    out = tmp_path.parent / f"{tmp_path.name}-requests"
    code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
    assert code == 0, text
    (req,) = out.glob("*.jsonl")
    return cfg, req


def _vllm_errors(requests: list[dict[str, object]]) -> list[bytes]:
    """vLLM's error lines for the first requests, one each, in the order of the data file."""
    out = []
    for line, req in zip(VLLM_ERRORS.read_text().splitlines(), requests, strict=False):
        quoted = json.dumps(check_of(req["body"]))[1:-1]  # type: ignore[arg-type]
        line = line.replace("CUSTOM_ID", str(req["custom_id"])).replace("QUOTED", quoted)
        out.append(line.encode())
    return out


@pytest.mark.parametrize("public", [True, False])
def test_vllm_error_lines_are_counted_kept_and_final_or_retried(
    tmp_path: Path, public: bool
) -> None:
    cfg, req = _export(tmp_path / "p", public)
    requests = [json.loads(x) for x in req.read_text().splitlines()]
    good = tmp_path / "good.jsonl"
    run_batch_file(req, good, verdict_responder("meets"))
    errors = _vllm_errors(requests)
    res = tmp_path / "res.jsonl"
    res.write_bytes(b"".join(x + b"\n" for x in errors + good.read_bytes().splitlines()[5:]))
    code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
    assert code == 1, out  # four 4xx lines are failures
    ingested = TOTAL_CALLS - 5
    assert (
        f"local: {ingested} verdict(s) ingested, 0 unusable repl(ies) to ask again, "
        "1 server error(s) to ask again, 4 failed\n"
    ) in out
    assert "already ingested" not in out  # none was
    assert "4 check(s) failed" in out
    quoted = check_of(requests[2]["body"])
    if public:
        assert out.count(": rejected: HTTP 400") == 3 and ": rejected: HTTP 404" in out
        assert "maximum context length is 4096 tokens" in out  # the message is kept
        assert "1 validation error for ChatCompletionRequest" in out  # so is a string error
        assert quoted[:30] in out
    else:
        refused = "rejected: the provider refused the request: HTTP"  # the fixed wording
        assert out.count(f"{refused} 400") == 3 and f"{refused} 400, BadRequestError" in out
        assert f"{refused} 404, NotFoundError" in out
        assert "maximum context" not in out and "validation error" not in out
        stored = stored_text(tmp_path / "p")
        for r in requests:
            assert check_of(r["body"]) not in out, check_of(r["body"])
            assert check_of(r["body"]) not in stored
        assert "maximum context" not in stored
    assert len(verdict_keys(tmp_path / "p")) == ingested
    # the 500 is asked again, and so are the failed ones (as direct mode retries a failure)
    again = tmp_path / "again"
    code, out = _run("judge", "--config", cfg, "--export-batch", str(again))
    assert code == 0 and "local: 5 request(s) in 1 file(s)" in out, out
    (req2,) = again.glob("*.jsonl")
    assert req2.name.startswith("local-1-")  # first attempts: an error is no unusable reply


def test_a_file_whose_every_line_is_an_error_exits_1(tmp_path: Path) -> None:
    cfg, req = _export(tmp_path / "p")
    requests = [json.loads(x) for x in req.read_text().splitlines()]
    not_served = VLLM_ERRORS.read_text().splitlines()[3]
    res = tmp_path / "404.jsonl"
    res.write_text(
        "".join(not_served.replace("CUSTOM_ID", str(r["custom_id"])) + "\n" for r in requests)
    )
    code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
    assert code == 1, out
    assert f"{res}: nothing ingested: each of its {TOTAL_CALLS} result(s) is an error" in out
    assert f"{TOTAL_CALLS} refused (HTTP 4xx: final)" in out
    assert "The model `judge-model` does not exist." in out
    five = tmp_path / "500.jsonl"
    engine = VLLM_ERRORS.read_text().splitlines()[1]
    five.write_text(engine.replace("CUSTOM_ID", str(requests[0]["custom_id"])) + "\n")
    code, out = _run("judge", "--config", cfg, "--import-batch", str(five))
    assert code == 1 and "1 server error (asked again by the next export)" in out, out
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    code, out = _run("judge", "--config", cfg, "--import-batch", str(empty))
    assert code == 1 and "holds no result lines" in out, out
    assert len(verdict_keys(tmp_path / "p")) == 0


def test_hostile_import_files_are_answered_with_problems(tmp_path: Path) -> None:
    cfg, req = _export(tmp_path / "p")
    good = tmp_path / "good.jsonl"
    run_batch_file(req, good, verdict_responder("meets"))
    lines = good.read_bytes().splitlines(keepends=True)
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(lines[0] + b"[" * 100_000 + b"]" * 100_000 + b"\n" + b"".join(lines[1:]))
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"".join(lines[:3]) + b"\n" * 2_000_000 + b"{x\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json\n" * 100_000)
    long = tmp_path / "long.jsonl"
    long.write_bytes(b'{"a": "' + b"x" * (3 << 20) + b'"}\n' + b"".join(lines))
    code, out = _run(
        "judge", "--config", cfg, "--import-batch", *map(str, (deep, blank, bad, long))
    )
    assert code == 1 and "Traceback" not in out, out
    assert f"{deep}:2: nested 100000 levels deep (at most 32)" in out
    assert f"{blank}:2000004: not valid JSON" in out  # the line numbers count the blank lines
    # one mistake on 200 lines is said once, with its count (the reading stops at 200)
    assert f"{bad}: lines 1, 2, 3 and 197 more (200 lines in all): not valid JSON" in out
    assert "200 problems: the rest of the file was not read" in out
    assert out.count(str(bad)) == 2
    assert f"{long}:1: line is 3.0 MB, over the 1.0 MB limit" in out
    assert "4 of 4 result file(s) refused" in out
    assert len(verdict_keys(tmp_path / "p")) == 0


def test_importing_a_file_again_counts_no_failed_line_twice(tmp_path: Path) -> None:
    """Lines in ``vllm run-batch``'s output shape (vLLM commit 0056ae7b, as in
    fixtures/vllm/README.md): unusable replies, a refused request and an engine error, imported
    three times, are one attempt each, as after one import."""
    cfg, req = _export(tmp_path / "p")
    requests = [json.loads(x) for x in req.read_text().splitlines()]
    verdict = json.dumps({"verdict": "meets", "rationale": "ok"})
    prose = "It broadly meets it, I think."
    good = tmp_path / "good.jsonl"
    run_batch_file(req, good, lambda body: prose if "tamarind" in check_of(body) else verdict)
    lines = good.read_bytes().splitlines()[2:]  # the first two: a 400 and a 500 instead
    unusable = sum(1 for x in lines if prose.encode() in x)
    res = tmp_path / "res.jsonl"
    res.write_bytes(b"".join(x + b"\n" for x in _vllm_errors(requests)[:2] + lines))
    code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
    said = f"{unusable} unusable repl(ies) to ask again, 1 server error(s) to ask again, 1 failed"
    assert unusable > 0 and said in out, out
    first = failures(tmp_path / "p")
    assert sorted(f["calls"] for f in first.values()) == [1] * (unusable + 1)  # + the 400
    verdicts = len(verdict_keys(tmp_path / "p"))
    assert verdicts == TOTAL_CALLS - 2 - unusable
    for _ in range(2):
        code, out = _run("judge", "--config", cfg, "--import-batch", str(res))
        assert f"{TOTAL_CALLS} result(s) already ingested" in out, out
        assert "0 verdict(s) ingested, 0 unusable repl(ies) to ask again, 0 server" in out, out
        assert failures(tmp_path / "p") == first  # no failed line counted as a new attempt
        assert len(verdict_keys(tmp_path / "p")) == verdicts
    again = tmp_path / "again"
    code, out = _run("judge", "--config", cfg, "--export-batch", str(again))
    assert code == 0, out
    # the unusable replies asked a second time (attempt 2), the 400 and the 500 a first time
    got = {p.name.split("-")[1]: len(p.read_text().splitlines()) for p in again.glob("*.jsonl")}
    assert got == {"1": 2, "2": unusable}, got
