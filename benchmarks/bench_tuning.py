"""Each step of the program's process policy against its own removal, at paper scale.

Every step of :data:`scoring.process.COMMAND_LINE` (a thread pool, the collector pause, the exit
freeze, the one BLAS thread, the shared reads) targets one figure. This
script writes the paper-scale synthetic project (1,813 questions x 14 models x 2 settings x 3
replay judges, 5.3 M verdicts), fills its ledger with one ``gamut judge``, then times each target
with the policy as it is and with each of its steps switched off (``COMMAND_LINE.without(step)``,
a policy setting: the same code runs), each run in a fresh process. The runs of one target go
round-robin (as is, then each step off, then again), so that the machine's drift falls on all
alike; each figure is the minimum over the repeats, and the noise is the spread of the as-is runs
(max over min). It prints one table: step, target figure, with, without, gain (the share of the
figure without the step that the step saves). A step is worth keeping at a gain of 10 % or more.

Targets:

- ``score warm``: ``gamut score`` with the private caches (compiled checks, digests, decoded
  verdict matrix) in place, as every run after the judge step: wall seconds; the BLAS step's
  figure is the same runs' CPU seconds (its claim was CPU spent spinning, not wall time);
- ``run, ledger full``: ``gamut run --no-site`` with every verdict in the ledger but no run record
  and no digests (so it validates every file, plans every pair, looks every key up and writes the
  verdict table);
- ``judge, fresh store``: ``gamut judge`` with only the ledger in the store (no working index,
  run record, compiled checks, digests, verdict or usage table: a workflow job after
  ``gamut ledger pull``);
- ``ledger pull``: 200 small shards (60 with ``--quick``) pushed to the tests' fake Hub (on
  127.0.0.1, in the same process) and pulled into an empty ledger (in-process seconds of the
  pull alone).

Steps that overlap network calls with work and cannot be timed without a provider
(``batch_upload``, ``answer_writer``) are listed as not measured.

    .venv/bin/python benchmarks/bench_tuning.py [--quick] [--repeats N] [--only TARGET ...]

``--quick`` (two repeats, 700 questions instead of 1,813, the ledger pull with 60 shards)
finishes in under three minutes on two cores: its gains are indicative, the full run decides.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from yardsticks import pulled_ledger_only, run_child  # noqa: E402

from scoring.process import BLAS_ONE_THREAD, COMMAND_LINE, POOLS, SMALL_PAGES, SWITCHES  # noqa: E402

LEDGER_KEY_ENV = "GAMUT_LEDGER_KEY"  # named by the paper project's config (held rubrics)
KEEP_AT = 10.0  # per cent

#: Steps measured with this script and removed (no gain of 10 % on their target in most runs;
#: ARCHITECTURE.md, "The process policy", has the figures). Switching them back on is a code
#: change now: they are listed so that the table names them.
REMOVED = {
    "score_tables": "score tables built on two threads (score warm)",
    "bootstrap": "bootstrap estimates beside the question scores on two threads (score warm)",
    "parquet_encode": "each score table's Parquet on a second thread (score warm)",
    "frame_to_arrow": "pyarrow's conversion threads in Table.from_pandas (score warm)",
    "matrix_decode": "the verdict matrix decoded on two threads (score cold)",
    "key_index": "the key index built on a second thread (run, ledger full; and while the pairs "
    "are planned, judge fresh store)",
    "key_lookup": "the plans' keys looked up on a thread per core (run, ledger full)",
    "verdict_table": "each judge's verdict rows encoded on a second thread (run, ledger full)",
    "verdict_files": "the site's per-submission verdict files on two threads (verdict files)",
}

#: The child: argv = step ("-": none off), kind ("gamut" or a timed snippet's name), its args.
CHILD = r"""
import sys, time
from pathlib import Path
from scoring import process
step, kind, *rest = sys.argv[1:]
policy = process.COMMAND_LINE if step == "-" else process.COMMAND_LINE.without(step)
if kind == "gamut":
    sys.argv = ["gamut", *rest]
    from gamut.cli import run
    run(policy)
elif kind == "ledger_pull":  # rest: shards; push them to a fake Hub, time the pull alone
    import os, tempfile
    from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub
    import gamut.ledger_hub as ledger_hub
    from scoring.ledger import KeyScheme, Ledger, VerdictRecord
    from scoring.verdicts import Verdict
    ledger_hub.COMPACT_AT = 10**9  # every shard its own file on the Hub, as pushes leave them
    sha = commit_sha({})
    repo = FakeRepo(commits={sha: {}}, branches={"main": sha}, private=True)
    s = KeyScheme.public()
    with serve_hub(FakeHub(repos={"org/ledger": repo}, token="hf_bench")) as hub, \
            tempfile.TemporaryDirectory() as tmp:
        os.environ.update(GAMUT_HF_ENDPOINT=hub.url, HF_TOKEN="hf_bench")
        source = Ledger.open(Path(tmp) / "source", s, held=False)
        for n in range(int(rest[0])):
            source.append_verdicts([
                VerdictRecord(
                    key=s.digest("jid", "q", f"r{n}.{k}") + s.digest("fact", "c"),
                    judge_identity="jid", judge="j1", submission_id="m-one",
                    setting="multimodal", question_id=f"q-{n:04d}", check_id=f"I{k}",
                    verdict=Verdict.MEETS, model="judge-2026-01-01",
                )
                for k in range(5)
            ])
        ledger_hub.push(source, "org/ledger")
        target = Ledger.open(Path(tmp) / "target", s, held=False)
        start = time.perf_counter()
        ledger_hub.pull(target, "org/ledger")
        print(time.perf_counter() - start)
else:
    raise SystemExit(f"unknown child {kind!r}")
"""


@dataclass
class Target:
    """One figure, the command that makes it, and the steps it judges."""

    name: str
    kind: str
    args: Callable[[Path], list[str]]
    prepare: Callable[[Path], None]
    steps: dict[str, str]  # step -> "wall" | "cpu" | "inproc"


def _rm(*paths: Path) -> None:
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def _private(root: Path) -> Path:
    return root / ".gamut" / "private"


def _unrecorded(root: Path) -> None:
    _rm(_private(root) / "runs", root / ".gamut" / "response-digests.json")


def _nothing(root: Path) -> None:
    return None


def _uncompiled(root: Path) -> None:
    _rm(_private(root) / "checks")


def _child(step: str | None, kind: str, args: list[str], cwd: Path) -> tuple[float, float, float]:
    """Run one child; return wall and CPU seconds, and the in-process seconds it printed (or
    the wall time)."""
    # the policy's own settings of the environment, not the caller's
    env = {k: v for k, v in os.environ.items() if k not in (*BLAS_ONE_THREAD, *SMALL_PAGES)}
    env[LEDGER_KEY_ENV] = os.environ.get(LEDGER_KEY_ENV, "bench-tuning-" + "0" * 40)
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-c", CHILD, step or "-", kind, *args]
    wall, cpu, _, out = run_child(cmd, cwd, env)
    text = out.strip()
    inproc = float(text.splitlines()[-1]) if kind != "gamut" else wall
    return wall, cpu, inproc


def _measure(target: Target, root: Path, repeats: int) -> dict[str | None, list[tuple[float, ...]]]:
    runs: dict[str | None, list[tuple[float, ...]]] = {None: [], **{s: [] for s in target.steps}}
    for _ in range(repeats):
        for step in runs:
            target.prepare(root)
            runs[step].append(_child(step, target.kind, target.args(root), root))
    return runs


_FIGURE = {"wall": 0, "cpu": 1, "inproc": 2}


def _write_project(out: Path, questions: int) -> Path:
    code = (
        "import sys; from pathlib import Path; from gamut.synthetic.paper import "
        "write_paper_scale; print(write_paper_scale(Path(sys.argv[1]), "
        "n_questions=int(sys.argv[2])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(out), str(questions)],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return Path(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Write the project, time every target with each step off, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="Two repeats, 700 questions, a smaller pull."
    )
    ap.add_argument("--questions", type=int, help="Questions of the project (default 1,813).")
    ap.add_argument("--repeats", type=int, help="Runs of each configuration (default 5; quick 2).")
    ap.add_argument("--only", nargs="+", help="Targets to time (default: all).")
    ap.add_argument("--keep", type=Path, help="Write the paper-scale project here and keep it.")
    args = ap.parse_args()
    repeats = args.repeats or (2 if args.quick else 5)
    tmp = Path(tempfile.mkdtemp(prefix="gamut-bench-tuning-"))
    root = args.keep or tmp / "paper"
    started = time.perf_counter()
    try:
        questions = args.questions or (700 if args.quick else 1813)
        config = _write_project(root, questions)
        print(
            f"synthetic project of {questions:,} questions (paper scale: 1,813) written in "
            f"{time.perf_counter() - started:.1f} s"
        )
        pull_shards = 60 if args.quick else 200
        cfg = str(config)
        targets = [
            Target(
                "score warm",
                "gamut",
                lambda r: ["score", "--config", cfg],
                _nothing,
                {"exit_freeze": "wall", "blas_one_thread": "cpu"},
            ),
            Target(
                "score cold",
                "gamut",
                lambda r: ["score", "--config", cfg],
                _uncompiled,
                {"fork_compile": "wall"},
            ),
            Target(
                "run, ledger full",
                "gamut",
                lambda r: ["run", "--no-site", "--config", cfg],
                _unrecorded,
                {"gc_pause": "wall", "share_reads": "wall"},
            ),
            Target(
                "judge, fresh store",
                "gamut",
                lambda r: ["judge", "--config", cfg],
                pulled_ledger_only,
                {"small_pages": "wall"},
            ),
            Target(
                "ledger pull",
                "ledger_pull",
                lambda r: [str(pull_shards)],
                _nothing,
                {"ledger_pull": "inproc"},
            ),
        ]
        if args.only:
            targets = [t for t in targets if t.name in args.only]
        if any(t.name in ("run, ledger full", "judge, fresh store") for t in targets):
            t = time.perf_counter()
            _child(None, "gamut", ["judge", "--config", str(config)], root)  # fills the ledger
            print(f"ledger filled by one gamut judge in {time.perf_counter() - t:.1f} s")
        if any(t.kind == "ledger_pull" for t in targets):
            print(f"ledger pull: {pull_shards} shards of 5 verdicts from the tests' fake Hub")
        print(
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
            f"{repeats} repeats, minimum of each"
        )
        rows: list[tuple[str, str, float, float, float, float, float]] = []
        for target in targets:
            t = time.perf_counter()
            runs = _measure(target, root, repeats)
            for step, figure in target.steps.items():
                i = _FIGURE[figure]
                with_ = min(r[i] for r in runs[None])
                without = min(r[i] for r in runs[step])
                noise = (max(r[i] for r in runs[None]) / with_ - 1) * 100
                # each round's step-off run against the as-is run just before it: the load
                # drifts less between neighbours than across the whole run
                paired = statistics.median(
                    (off[i] - on[i]) / off[i] * 100
                    for on, off in zip(runs[None], runs[step], strict=True)
                )
                rows.append(
                    (
                        step,
                        f"{target.name} ({figure} s)",
                        with_,
                        without,
                        (without - with_) / without * 100,
                        paired,
                        noise,
                    )
                )
            print(f"  {target.name}: {time.perf_counter() - t:.0f} s")
        measured = {r[0] for r in rows}
        width = max(len(r[1]) for r in rows) if rows else 10
        print(
            f"\n{'step':<16} {'target figure':<{width}} {'with':>7} {'without':>8} "
            f"{'gain %':>7} {'paired %':>8} {'noise %':>8}  verdict"
        )
        for step, fig, w, wo, gain, paired, noise in rows:
            verdict = "keep" if gain >= KEEP_AT else "remove"
            print(
                f"{step:<16} {fig:<{width}} {w:>7.3f} {wo:>8.3f} {gain:>7.1f} {paired:>8.1f} "
                f"{noise:>8.1f}  " + verdict
            )
        for step, what in REMOVED.items():
            print(f"{step:<16} removed: {what}")
        for step in [*POOLS, *SWITCHES]:
            if step not in measured and (args.only is None):
                on = COMMAND_LINE.threads(step) if step in POOLS else getattr(COMMAND_LINE, step)
                print(f"{step:<16} not measured here (network overlap; in the policy: {on})")
        print(f"\ntotal {time.perf_counter() - started:.0f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
