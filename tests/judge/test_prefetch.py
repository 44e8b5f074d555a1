"""The judge's key index, read on the ``key_index`` thread while the pairs are planned (the
program's policy): the same run as on the calling thread, and a ledger that cannot be read is
named by the run itself, not lost with the thread."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring import process
from scoring.judge.progress import NullProgress
from scoring.ledger import Ledger, LedgerError
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project


def _fresh(root: Path) -> None:
    """Leave only the ledger in the store (a workflow job after ``gamut ledger pull``)."""
    for p in (root / ".gamut").iterdir():
        if p.name != "ledger":
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def test_the_index_is_read_on_its_thread_and_the_run_is_the_same(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    assert pipeline.judge(Project(cfg), progress=NullProgress()).judges["gpt"].calls == TOTAL_CALLS
    built_on: list[str] = []
    real = Ledger.key_index

    def spy(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        built_on.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Ledger, "key_index", spy)
    runs = {}
    for policy in (process.LIBRARY, process.COMMAND_LINE):
        _fresh(tmp_path)
        built_on.clear()
        with process.using(policy):
            s = pipeline.judge(Project(cfg), progress=NullProgress()).judges["gpt"]
        runs[policy is process.LIBRARY] = (s.calls, s.cache_hits, s.checks)
        assert built_on[0] == ("MainThread" if policy is process.LIBRARY else "gamut-key_index_0")
    assert runs[True] == runs[False] == (0, TOTAL_CALLS, runs[True][2])


def test_a_ledger_the_thread_cannot_read_stops_the_run_by_name(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    pipeline.judge(Project(cfg), progress=NullProgress())
    _fresh(tmp_path)
    shard = next((tmp_path / ".gamut" / "ledger" / "verdicts").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-40])  # its footer cut off
    with process.using(process.COMMAND_LINE), pytest.raises(LedgerError, match=shard.name):
        pipeline.judge(Project(cfg), progress=NullProgress())
    assert not [t for t in threading.enumerate() if t.name.startswith("gamut-key_index")]
