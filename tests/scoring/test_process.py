"""The process policy: the engine used as a library starts no thread or process of its own; the
program's policy (entered at the command line's entry point) uses its pools and its fork."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from scoring import process
from scoring.process import COMMAND_LINE, LIBRARY, POOLS, SWITCHES, ProcessPolicy, using
from tests.demo_config import REPO, write_demo_config

#: Run in a fresh interpreter: judge, write the verdict table and score the demo whose config is
#: argv[1] through the library, under the policy named by argv[2] (LIBRARY: none entered), and
#: print the threads and processes started and those still running at the end.
_AS_A_LIBRARY = """
import json, sys, threading, multiprocessing.process
import scoring
from scoring import process

if sys.argv[2] != "LIBRARY":
    process.enter(getattr(process, sys.argv[2]))
threads, processes = [], []
start_thread, start_process = threading.Thread.start, multiprocessing.process.BaseProcess.start

def thread_started(self):
    threads.append(self.name)
    start_thread(self)

def process_started(self):
    processes.append(self.name)
    start_process(self)

threading.Thread.start = thread_started
multiprocessing.process.BaseProcess.start = process_started
from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project

project = Project(load_config(sys.argv[1]))
project.prefetch_check_table()  # as gamut score does: a fork under the program's policy only
with project.shared_reads.block():
    pipeline.judge(project)
pipeline.write_verdicts(project)
pipeline.score(project)
print(json.dumps({
    "threads": threads,
    "processes": processes,
    "active_threads": threading.active_count(),
    "children": len(multiprocessing.active_children()),
    "scored": (project.path(project.cfg.store.results) / "leaderboard.parquet").is_file(),
    "blas": __import__("os").environ.get("OPENBLAS_NUM_THREADS"),
    "huge_pages": bool(__import__("numpy")._core.multiarray._get_madvise_hugepage()),
}))
"""


def _run_as_a_library(tmp_path: Path, policy: str) -> dict[str, Any]:
    config = write_demo_config(tmp_path / policy)
    done = subprocess.run(
        [sys.executable, "-c", _AS_A_LIBRARY, str(config), policy],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def test_the_engine_as_a_library_starts_no_thread_or_process(tmp_path: Path) -> None:
    got = _run_as_a_library(tmp_path, "LIBRARY")
    assert got["scored"]
    assert got["threads"] == [] and got["processes"] == []
    assert got["active_threads"] == 1 and got["children"] == 0


def test_the_programs_policy_holds_blas_to_one_thread_and_forks_the_compile(
    tmp_path: Path,
) -> None:
    got = _run_as_a_library(tmp_path, "COMMAND_LINE")
    assert got["scored"] and got["blas"] == "1"
    assert not got["huge_pages"]  # numpy loaded with its arrays off transparent huge pages
    # the thread pools that paid are the network's (ledger pull, batch upload, generate's
    # writer): the demo's judging and scoring run on the calling thread, as measured best;
    # the checks are compiled in a forked process while the submissions are validated
    assert got["threads"] == [] and len(got["processes"]) == 1
    assert got["children"] == 0  # joined before the checks were read


def test_a_pool_of_no_threads_runs_each_task_in_the_calling_thread() -> None:
    with using(LIBRARY), process.pool("ledger_pull") as pool:
        here = pool.submit(threading.get_ident)
        failed = pool.submit(int, "not a number")
        assert here.result() == threading.get_ident()
        with pytest.raises(ValueError):  # an error waits in its future, as a pool hands it
            failed.result()
    with using(COMMAND_LINE), process.pool("ledger_pull") as pool:
        assert pool.submit(threading.get_ident).result() != threading.get_ident()
    assert process.current() is LIBRARY  # each block gave back the policy before it


def test_every_step_switches_off_alone() -> None:
    for step in [*POOLS, *SWITCHES]:
        off = COMMAND_LINE.without(step)
        assert process.describe(off) != process.describe(COMMAND_LINE), step
        changed = {
            k
            for k in [*POOLS, *SWITCHES]
            if (off.threads(k) if k in POOLS else getattr(off, k))
            != (COMMAND_LINE.threads(k) if k in POOLS else getattr(COMMAND_LINE, k))
        }
        assert changed == {step}
    with pytest.raises(KeyError, match="no step 'turbo'"):
        COMMAND_LINE.without("turbo")
    with pytest.raises(ValueError, match="unknown thread pool"):
        ProcessPolicy(pools={"turbo": 2})
