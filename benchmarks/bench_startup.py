"""Start-up of the light commands: ``gamut --help`` and ``gamut submission validate`` on one demo
submission, each a fresh process, beside ``python -c pass``.

Each command runs ``--runs`` times, alternating with the others (and with ``--compare``'s source
tree, when given, so both see the same machine load); prints the median and best wall time, CPU
time and peak resident memory, beside the baselines measured before the commands imported only
what they use. The validation's copy-check cache is warmed by one untimed run first. On a loaded
machine wall time is mostly waiting for a core: the CPU time is the figure to compare then.

    .venv/bin/python benchmarks/bench_startup.py [--runs 15] [--compare DIR]

``--compare DIR`` times the same commands with ``DIR`` (for example ``git archive main | tar -x
-C DIR``) first on ``PYTHONPATH``, so its ``scoring`` and ``gamut`` packages are used instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: name -> (baseline wall seconds, target wall seconds), from before the lazy imports
BASELINES = {"python -c pass": (0.02, None), "gamut --help": (0.64, 0.15)}
BASELINES["gamut submission validate (one demo submission)"] = (0.74, 0.35)
HEAVY = ("pandas", "pyarrow", "numpy", "plotly", "mkdocs", "openai", "anthropic", "rich")


def commands() -> dict[str, list[str]]:
    """The timed commands, run from the repository root, on the demo's config."""
    gamut = str(Path(sys.executable).with_name("gamut"))
    first = sorted(p for p in (ROOT / "demo" / "submissions").iterdir() if p.is_dir())[0]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "gamut --help": [gamut, "--help"],
        "gamut submission validate (one demo submission)": [
            gamut,
            "submission",
            "validate",
            "--config",
            "demo/gamut.toml",
            str(first.relative_to(ROOT)),
        ],
    }


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Run ``cmd`` once; return wall seconds, CPU seconds and peak resident MB."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def heavy_imports(cmd: list[str], env: dict[str, str]) -> list[str]:
    """The heavy packages ``cmd`` imports (run once more under ``-X importtime``)."""
    if cmd[0] == sys.executable:
        return []
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return [h for h in HEAVY if h in names]


def main() -> None:
    """Time every command, alternating, and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="Timed runs of each command.")
    ap.add_argument("--compare", type=Path, help="Another source tree to time alongside.")
    args = ap.parse_args()
    trees = {"this tree": dict(os.environ)}
    if args.compare is not None:
        path = os.pathsep.join([str(args.compare.resolve()), os.environ.get("PYTHONPATH", "")])
        trees[f"{args.compare}"] = {**os.environ, "PYTHONPATH": path}
    cmds = commands()
    for env in trees.values():
        for cmd in cmds.values():
            run_once(cmd, env)  # warm the file cache, the bytecode and the copy-check cache
    got: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for _ in range(args.runs):
        for tree, env in trees.items():
            for name, cmd in cmds.items():
                got.setdefault((tree, name), []).append(run_once(cmd, env))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.runs} runs each")
    for (tree, name), runs in got.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rss = max(r[2] for r in runs)
        base, target = BASELINES[name]
        verdict = ""
        if target is not None:
            verdict = (
                f"; target {target:.2f} s: wall {'met' if wall <= target else 'MISSED'}, "
                f"CPU {'met' if cpu <= target else 'MISSED'}"
            )
        heavy = heavy_imports(cmds[name], trees[tree])
        print(
            f"[{tree}] {name}: median {wall:.3f} s wall (best {min(r[0] for r in runs):.3f} s), "
            f"{cpu:.3f} s CPU, {rss:.0f} MB peak; baseline {base:.2f} s{verdict}; "
            f"heavy imports: {', '.join(heavy) or 'none'}"
        )


if __name__ == "__main__":
    main()
