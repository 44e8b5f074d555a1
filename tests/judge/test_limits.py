"""A provider ignoring max_tokens, two runs on one ledger, and the reply's model snapshot."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError
from scoring.judge.backends import MAX_REPLY_BYTES
from scoring.judge.pacing import BREAK_OTHER
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.store import failures

QUIET = NullProgress()


@pytest.mark.slow  # a 50 MB reply over HTTP: about 12 s on two cores
def test_a_50_mb_reply_is_cut_off_named_and_not_resent(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    huge = "x" * (50 * 1024 * 1024)
    fake_llm.responder = lambda body: huge
    cfg = load_config(
        write_project(tmp_path, openai_judge(fake_llm.openai_base_url, retries=0, concurrency=1))
    )
    report = pipeline.judge(Project(cfg), progress=QUIET)
    n = len(report.failures)  # the breaker stops the judge after BREAK_OTHER of them in a row
    assert n >= BREAK_OTHER and n + report.judges["gpt"].unfinished == TOTAL_CALLS
    kinds = [f.kind for f in report.failures]
    # a connection cut mid-reply can make the next call on it fail as a dropped connection
    assert set(kinds) <= {"too_large", "api_error"} and kinds.count("too_large") >= 1
    big = next(f for f in report.failures if f.kind == "too_large")
    assert f"exceeded {MAX_REPLY_BYTES} bytes" in big.message
    assert len(fake_llm.requests) == n  # no re-ask re-sends the reply
    stored = sum(p.stat().st_size for p in (tmp_path / ".gamut").rglob("*") if p.is_file())
    assert stored < 5 * 1024 * 1024  # nothing of the replies was kept
    assert len(failures(tmp_path)) == n
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


def test_a_second_run_on_the_same_ledger_is_refused(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    project = Project(load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url))))
    with project.ledger.lock(), pytest.raises(GamutError, match="another gamut judge"):
        pipeline.judge(project, progress=QUIET)
    assert fake_llm.requests == []


def test_every_verdict_records_the_reported_snapshot(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.snapshot = "judge-model-2026-02-03"
    project = Project(load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url))))
    pipeline.judge(project, progress=QUIET)
    assert set(project.ledger.verdicts(["model"])["model"].to_pylist()) == {
        "judge-model-2026-02-03"
    }


def test_truncated_index_is_rebuilt_and_nothing_is_judged_again(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    pipeline.judge(Project(cfg), progress=QUIET)
    (tmp_path / ".gamut" / "verdicts.sqlite").write_bytes(b"")
    fake_llm.reset()
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert any("empty (0 bytes)" in n for n in report.notes)
    assert fake_llm.requests == [] and report.judges["gpt"].cache_hits == TOTAL_CALLS
