"""Time the whole ``gamut score`` command at paper scale, beside the figures measured before.

Writes the paper-scale synthetic project (1,813 questions x 14 models x 2 settings x 3 judges,
about 5.3 million verdicts) into a temporary folder, then runs ``gamut score --config ...`` as a
subprocess, process start and 1,000 bootstrap resamples included (it compiles the rubrics, reads
every response file and decodes the verdict table: nothing is kept between runs). A cold run
follows dropped private state (``.gamut`` less the ledger); a warm one follows another. Each round
is one cold run and two warm ones; prints wall time, CPU time, peak memory and verdicts per second
of each run, then the medians beside the baseline measured before the verdict matrix was streamed
(warm 1.64 s and 521 MB peak) and the targets (warm at most 1.2 s and 400 MB, cold at most 2 s).

    .venv/bin/python benchmarks/bench_score.py [--runs 3] [--keep DIR]
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
from pathlib import Path

import pyarrow.parquet as pq
from yardsticks import report

ROOT = Path(__file__).resolve().parents[1]


#: Measured before the verdict table was streamed: warm wall seconds and peak resident MB.
BASELINE_WARM_S, BASELINE_WARM_MB = 1.64, 521.0
TARGET_WARM_S, TARGET_WARM_MB, TARGET_COLD_S = 1.2, 400.0, 2.0


def run_once(config: Path) -> tuple[float, float, float]:
    """Run ``gamut score`` once; return wall seconds, CPU seconds and peak resident MB."""
    gamut = Path(sys.executable).with_name("gamut")
    cmd = [str(gamut), "score", "--config", str(config)]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"gamut score failed ({proc.returncode}):\n{err.read().decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux


def main() -> None:
    """Generate the project, time the command, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs", type=int, default=3, help="Rounds of one cold and two warm timed runs."
    )
    ap.add_argument("--keep", type=Path, help="Write the project here and keep it.")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="gamut-bench-score-"))
    try:
        t0 = time.perf_counter()
        # in a child process, so that the timed runs are not forked from a large parent (the
        # peak resident size of a child counts the memory it had before exec)
        code = (
            "import sys; from pathlib import Path; from workbench.synthetic.paper import "
            "write_paper_scale; print(write_paper_scale(Path(sys.argv[1])))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        config = Path(done.stdout.strip().splitlines()[-1])
        print(f"wrote the paper-scale project in {time.perf_counter() - t0:.1f} s: {out}")
        n = pq.ParquetFile(out / "results" / "verdicts.parquet").metadata.num_rows
        print(f"verdicts: {n:,}")
        print(f"load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        # An installed tree has the bytecode of its modules; a machine that sets
        # PYTHONDONTWRITEBYTECODE would otherwise compile the project's ~60 modules every run.
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "scoring", "gamut", "generator"],
            check=True,
            cwd=ROOT,
        )
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            print("PYTHONDONTWRITEBYTECODE is set: the project's bytecode was compiled first")
        # rounds of one cold run (the private state removed) and two warm ones, so that the
        # machine's drift falls on both kinds alike; the medians are the figures
        runs: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": []}
        for r in range(args.runs):
            for kind in ("cold", "warm", "warm"):
                if kind == "cold":
                    shutil.rmtree(out / ".gamut", ignore_errors=True)
                wall, cpu, mb = run_once(config)
                runs[kind].append((wall, cpu, mb))
                print(
                    f"round {r + 1} {kind}: {wall:.2f} s wall ({cpu:.2f} s CPU), "
                    f"{mb:,.0f} MB peak, {n / wall / 1e6:.2f} M verdicts/s"
                )
        cold_s = statistics.median(w for w, _, _ in runs["cold"])
        warm_s = statistics.median(w for w, _, _ in runs["warm"])
        warm_mb = max(m for _, _, m in runs["warm"])
        print(
            f"cold, median of {len(runs['cold'])}: "
            f"{cold_s:.2f} s (target {TARGET_COLD_S:.1f} s: "
            f"{'met' if cold_s <= TARGET_COLD_S else 'MISSED'})"
        )
        print(
            f"warm, median of {len(runs['warm'])}: {warm_s:.2f} s, "
            f"{warm_mb:,.0f} MB peak at most (baseline {BASELINE_WARM_S:.2f} s / "
            f"{BASELINE_WARM_MB:.0f} MB, {BASELINE_WARM_S / warm_s:.1f}x faster; target "
            f"{TARGET_WARM_S:.1f} s / {TARGET_WARM_MB:.0f} MB: "
            f"{'met' if warm_s <= TARGET_WARM_S and warm_mb <= TARGET_WARM_MB else 'MISSED'})"
        )
        report("gamut score, warm", f"{warm_s:.2f} s, {warm_mb:,.0f} MB",
               f"target {TARGET_WARM_S} s, {TARGET_WARM_MB:.0f} MB")  # fmt: skip
        report("gamut score, cold", f"{cold_s:.2f} s", f"target {TARGET_COLD_S} s")
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
