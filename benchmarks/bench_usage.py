"""The usage table at paper scale: what writing ``judge_usage.parquet`` beside the verdict table
adds to ``gamut judge`` / ``gamut run``.

Writes the paper-scale synthetic project with ``gamut demo paper`` (about 5.3 million verdicts,
three replay judges) and judges it, unless ``--project`` names one already judged; then times,
in this process: the ledger's key index with the verdict column (what the judge step builds),
the verdict table alone, the verdict table with the usage table summed in the same pass (what
``gamut judge`` writes), the verdict table alone again, and the usage table on its own
(``usage_frame``: a results folder whose verdict table is current and whose usage table is
not), twice.

    .venv/bin/python benchmarks/bench_usage.py [--project DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=Path, help="a paper-scale project already judged")
    args = parser.parse_args()
    os.environ.setdefault("GAMUT_LEDGER_KEY", "0" * 64)  # named by the paper project's config
    sys.path.insert(0, str(ROOT))
    from gamut import pipeline
    from gamut.config import load_config
    from gamut.project import Project
    from scoring.judge.table import table_fingerprint, write_verdict_parts
    from scoring.judge.usage import usage_frame, usage_path

    folder = args.project
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="gamut-bench-usage-"))
        gamut = [sys.executable, "-m", "gamut", "demo", "paper", "--out", str(folder)]
        subprocess.run(gamut, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        pipeline.judge(Project(load_config(folder / "gamut.toml")))
    project = Project(load_config(folder / "gamut.toml"))

    def timed(label: str, fn: object) -> object:
        t = time.perf_counter()
        out = fn()  # type: ignore[operator]
        print(f"{label}: {time.perf_counter() - t:.2f} s")
        return out

    plans = project.pair_plans()
    timed("key index (verdict column)", lambda: project.ledger.key_index(columns=["verdict"]))
    public = project.rubrics_public
    fp = table_fingerprint(plans, project.ledger, public=public, judge_ids=False)
    version = project.check_table.rubric_version
    out = usage_path(project.verdict_table)

    def table(usage: Path | None) -> Path:
        return write_verdict_parts(
            plans, project.ledger, project.verdict_table, public=public,
            rubric_version=version, fingerprint=fp, usage_out=usage,
        )  # fmt: skip

    timed("verdict table alone", lambda: table(None))
    timed("verdict table and usage table, one pass", lambda: table(out))
    timed("verdict table alone, again (the first pays for the process's first pages)",
          lambda: table(None))  # fmt: skip
    frame = timed("usage frame on its own", lambda: usage_frame(plans, project.ledger))
    timed("usage frame on its own, again", lambda: usage_frame(plans, project.ledger))
    n = int(frame["n_verdicts"].sum())  # type: ignore[index]
    print(f"{n:,} verdicts in {len(frame):,} usage rows; {out.stat().st_size:,} bytes")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
