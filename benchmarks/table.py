"""``make bench``: every ``benchmarks/bench_*.py`` in a process of its own (its own output shown as
it runs), then one table of the figures each reported (:func:`yardsticks.report`), each beside its
yardstick. Exits 1 naming the scripts that failed, after the table.

Run: ``.venv/bin/python benchmarks/table.py [NAME ...]`` (default: every script; a NAME such as
``score`` runs ``bench_score.py`` only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from yardsticks import REPORT_ENV, ROOT


def _rows(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _print_table(rows: list[dict[str, str]]) -> None:
    heads = ("bench", "figure", "measured", "yardstick")
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in heads]
    lines = [heads, tuple("-" * w for w in widths), *(tuple(r[h] for h in heads) for r in rows)]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())


def main(names: list[str]) -> int:
    """Run the scripts, print the table; the exit code (1 if any script failed)."""
    scripts = sorted((ROOT / "benchmarks").glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gamut-bench-") as tmp:
        out = Path(tmp) / "figures.jsonl"
        env = {**os.environ, REPORT_ENV: str(out), "PYTHONPATH": str(ROOT)}
        for script in scripts:
            print(f"== {script.name}", flush=True)
            before = len(_rows(out))
            done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, check=False)
            if done.returncode != 0:
                failed.append(script.name)
            if len(_rows(out)) == before:  # a script that reports nothing still gets its line
                row = {"bench": script.stem, "figure": "(its own output, above)"}
                with out.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({**row, "measured": "", "yardstick": ""}) + "\n")
        rows = _rows(out)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    _print_table(rows)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
