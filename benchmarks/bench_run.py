"""``gamut run`` at paper scale with every verdict cached: how long it spends loading its inputs,
once per stage (as before the project loaded each input once) and once per run, and the whole
command's wall time and peak memory.

Writes the paper-scale synthetic project with ``gamut demo paper`` (1,813 questions x 14 models x
2 settings x 3 replay judges, about 5.3 million verdicts) and runs ``gamut run`` once to fill the
verdict cache (printed as the first run), unless ``--project`` names a project whose cache is full.
Then, each in a fresh process:

- *per stage*: every stage (judge, verdict table, score tables, site) gets its own
  :class:`~gamut.project.Project`, so each reads the inputs it needs again, as the stages did before
  the project kept them: the judge's input join runs twice and the score loader starts cold;
- *one project*: :func:`gamut.pipeline.run` on one project, as ``gamut run`` does;
- the ``gamut run`` command itself: wall time and peak resident memory.

Loading is timed by a :class:`~gamut.project.Project` subclass around each input it loads, and
around the score stage's loader (submissions and the verdict table). The compiled-check cache of
the private store is removed before each process, so the score loader's cold path is measured.

    .venv/bin/python benchmarks/bench_run.py [--project DIR] [--keep DIR] [--modes ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from yardsticks import run_child  # noqa: E402

LEDGER_KEY_ENV = "GAMUT_LEDGER_KEY"  # named by the config `gamut demo paper` writes
T = TypeVar("T")

#: Measured on main before inputs were loaded once per run (issue text), in seconds.
BASELINE_JOIN_S = 1.5  # the judge's input join, run twice per `gamut run`
BASELINE_LOADER_COLD_S = 2.9  # the score loader, cold


def _project_class(log: list[tuple[str, float]]) -> type:
    """A Project that appends (input, seconds) to ``log`` each time it loads an input."""
    from gamut.project import Project

    inner: list[float] = []  # per open timer, the time of the loads nested in it

    @contextmanager
    def timed(name: str) -> Iterator[None]:
        # exclusive times: a load that triggers another (the join reads the questions) is
        # logged without the nested one, so that the log adds up
        start = time.perf_counter()
        inner.append(0.0)
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            nested = inner.pop()
            if inner:
                inner[-1] += spent
            log.append((name, spent - nested))

    def wrap(name: str, prop: Any) -> cached_property[Any]:
        def load(self: Project) -> Any:
            with timed(name):
                return prop.func(self)

        out: cached_property[Any] = cached_property(load)
        out.__set_name__(TimedProject, name)
        return out

    class TimedProject(Project):
        def units(self, submissions: Any = None, settings: Any = None) -> Any:
            key = (
                None if submissions is None else tuple(submissions),
                None if settings is None else tuple(settings),
            )
            if key in self._units:
                return super().units(submissions, settings)
            with timed("responses joined with their checks (judge input join)"):
                return super().units(submissions, settings)

        def judges(self, names: Any = None, *, need_keys: bool) -> Any:
            with timed("judges built (replay files opened)"):
                return super().judges(names, need_keys=need_keys)

        def pair_plans(self, *args: Any, **kwargs: Any) -> Any:
            with timed("pair plans (every check's key)"):
                return super().pair_plans(*args, **kwargs)

    for name in ("questions", "rubrics", "checks", "check_table", "ledger"):
        setattr(TimedProject, name, wrap(name, Project.__dict__[name]))
    return TimedProject


def _timed_call(log: list[tuple[str, float]], name: str, fn: Callable[..., T]) -> Callable[..., T]:
    def call(*args: Any, **kwargs: Any) -> T:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            log.append((name, time.perf_counter() - start))

    return call


def child(mode: str, config: Path) -> None:
    """Run the pipeline in this process; print its loading log and stage times as JSON."""
    import scoring.tables
    from gamut import pipeline
    from gamut.config import load_config

    log: list[tuple[str, float]] = []
    # the score stage's loader (submission metadata and response sizes, the verdict table)
    scoring.tables.load_inputs = _timed_call(
        log, "score loader (submissions, verdict table)", scoring.tables.load_inputs
    )
    cls = _project_class(log)
    cfg = load_config(config)
    stages: dict[str, float] = {}
    start = time.perf_counter()
    shared = cls(cfg) if mode == "shared" else None
    for name, stage in (
        ("judge", pipeline.judge),
        ("verdict table", pipeline.write_verdicts),
        ("score tables", pipeline.score),
        ("site", pipeline.build_site),
    ):
        t = time.perf_counter()
        stage(shared or cls(cfg))  # one project for every stage, or a new one per stage
        stages[name] = time.perf_counter() - t
    total = time.perf_counter() - start
    print(json.dumps({"log": log, "stages": stages, "total": total}))


def _run(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Run ``cmd``; return wall seconds, peak resident MB and its standard output."""
    # the synthetic rubrics are held, so the ledger's keys are keyed by a secret
    env = {**os.environ, LEDGER_KEY_ENV: os.environ.get(LEDGER_KEY_ENV, "bench-run-" + "0" * 40)}
    wall, _, mb, out = run_child(cmd, cwd, env)
    return wall, mb, out


def _private_checks(config: Path) -> Path:
    from gamut.project import Project

    return Project.load(config).private / "checks"


def _report(name: str, got: dict[str, Any], mb: float) -> float:
    log: list[tuple[str, float]] = got["log"]
    print(f"\n{name}: {got['total']:.1f} s in-process, {mb:,.0f} MB peak")
    print("  stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in got["stages"].items()))
    for what, seconds in log:
        print(f"  load {what}: {seconds:.2f} s")
    joins = [s for w, s in log if w.startswith("responses joined")]
    loaders = [s for w, s in log if w.startswith("score loader")]
    tables = [s for w, s in log if w == "check_table"]
    loading = sum(s for _, s in log)
    print(
        f"  judge input join: {len(joins)} x, {sum(joins):.2f} s "
        f"(baseline 2 x {BASELINE_JOIN_S:.1f} s = {2 * BASELINE_JOIN_S:.1f} s)"
    )
    print(
        f"  score loader incl. check table: {sum(loaders) + sum(tables):.2f} s "
        f"(baseline {BASELINE_LOADER_COLD_S:.1f} s cold)"
    )
    print(f"  all input loading: {loading:.2f} s")
    return loading


def main() -> None:
    """Write or reuse the project, run each mode, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, help="A paper-scale project with a full cache.")
    ap.add_argument("--keep", type=Path, help="Write the project here and keep it.")
    ap.add_argument(
        "--modes",
        nargs="+",
        choices=["per-stage", "shared", "command"],
        default=["per-stage", "shared", "command"],
        help="What to run (default: all three).",
    )
    ap.add_argument("--child", nargs=2, metavar=("MODE", "CONFIG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    gamut = str(Path(sys.executable).with_name("gamut"))
    out = args.project or args.keep or Path(tempfile.mkdtemp(prefix="gamut-bench-run-"))
    try:
        config = out / "gamut.toml"
        if args.project is None:
            t = time.perf_counter()
            _run([gamut, "demo", "paper", "--out", str(out)], ROOT)
            print(f"wrote the paper-scale project in {time.perf_counter() - t:.1f} s: {out}")
            wall, mb, _ = _run([gamut, "run", "--config", str(config)], ROOT)
            print(
                f"first run (every verdict judged by the replay judges): {wall:.1f} s, {mb:,.0f} MB"
            )
        import pyarrow.parquet as pq

        n = pq.ParquetFile(out / "results" / "verdicts.parquet").metadata.num_rows
        print(f"verdicts: {n:,}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        loading = {}
        names = {"per-stage": "per stage (before)", "shared": "one project (after)"}
        for mode in (m for m in ("per-stage", "shared") if m in args.modes):
            shutil.rmtree(_private_checks(config), ignore_errors=True)
            cmd = [sys.executable, __file__, "--child", mode, str(config)]
            _, mb, stdout = _run(cmd, ROOT)
            loading[mode] = _report(names[mode], json.loads(stdout.strip().splitlines()[-1]), mb)
        if len(loading) == 2:
            print(
                f"\ninput loading: {loading['per-stage']:.2f} s per stage -> "
                f"{loading['shared']:.2f} s with one project"
            )
        if "command" in args.modes:
            shutil.rmtree(_private_checks(config), ignore_errors=True)
            wall, mb, _ = _run([gamut, "run", "--config", str(config)], ROOT)
            print(f"\n`gamut run`, every verdict cached: {wall:.1f} s wall, {mb:,.0f} MB peak")
    finally:
        if args.project is None and args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
