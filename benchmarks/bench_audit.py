"""What the human audit costs ``gamut score``, and how often the PPI interval covers the truth.

1. Cost. Writes the paper-scale synthetic project (1,813 questions x 14 models x 2 settings x 3
   judges), then audit labels for 5% of the responses of every (model, setting), drawn per
   domain (about 90 responses per setting, 180 per model): every check of a drawn response
   labelled by one annotator from the primary judge's verdicts with 10% neighbouring-verdict
   errors, a second annotator on a fifth of them, an adjudication where the two differ. Runs
   warm ``gamut score`` (the private cache filled) as a subprocess without and with
   ``[benchmark] audit``, alternating, and prints the medians of wall time, CPU time and peak
   memory, and what the audit adds (target: under 10% of the warm score).

2. Coverage. On synthetic verdicts with a known judge bias (the demo's lenient judge: missing to
   partially_meets at 25%, partially_meets to meets at 35%), 1,813 questions of about 35 checks,
   5% of them audited by error-free humans, over 200 seeds: how often the 95% PPI interval holds
   the true mean question score (target 93-97%), beside the judge's own bootstrap interval and the
   humans-only interval over the audited questions, with their mean widths.

    .venv/bin/python benchmarks/bench_audit.py [--runs 3] [--seeds 200] [--skip-cost] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_score import run_once  # noqa: E402

AUDIT_SHARE = 0.05
DOUBLE_SHARE = 0.2
ERROR_RATE = 0.1
TARGET_SHARE = 0.10


def write_labels(project: Path, seed: int = 0) -> int:
    """Write audit labels into ``project/audit`` from the primary judge's verdicts; return the
    number of lines. Run in a child process (see :func:`main`)."""
    import pandas as pd
    import pyarrow.parquet as pq

    from scoring.verdicts import VERDICT_ORDER

    rng = np.random.default_rng(seed)
    table = pq.read_table(project / "results" / "verdicts.parquet").to_pandas()
    primary = table["judge"].astype(str).iloc[0]
    table = table[table["judge"].astype(str) == primary]
    questions = pd.read_json(project / "questions.jsonl", lines=True)[["question_id", "domain"]]
    table = table.merge(questions, on="question_id")
    names = np.array([v.value for v in VERDICT_ORDER])
    codes = {v: i for i, v in enumerate(names)}
    files: dict[str, list[str]] = {"ann-a": [], "ann-b": [], "adjudicator": []}
    for (sub, setting, _dom), part in table.groupby(
        ["submission_id", "setting", "domain"], observed=True, sort=True
    ):
        qids = sorted(part["question_id"].astype(str).unique())
        n = max(1, round(AUDIT_SHARE * len(qids)))
        for qid in rng.choice(qids, size=n, replace=False):
            rows = part[part["question_id"].astype(str) == qid]
            truth = rows["verdict"].astype(str).map(codes).to_numpy(np.int64)

            def noisy(t: np.ndarray) -> np.ndarray:
                wrong = rng.random(t.size) < ERROR_RATE
                step = np.where(rng.random(t.size) < 0.5, -1, 1)
                moved = np.where(t == 0, 1, np.where(t == 3, 2, t + step))
                return np.where(wrong, moved, t)

            a = noisy(truth)
            b = noisy(truth) if rng.random() < DOUBLE_SHARE else None
            for i, cid in enumerate(rows["check_id"].astype(str)):
                base = {"submission_id": str(sub), "setting": str(setting),
                        "question_id": str(qid), "check_id": cid}  # fmt: skip

                def put(who: str, code: int, role: str, base: dict[str, str] = base) -> None:
                    line = {**base, "annotator": who, "verdict": str(names[code]), "role": role}
                    files[who].append(json.dumps(line))

                put("ann-a", a[i], "label")
                if b is not None:
                    put("ann-b", b[i], "label")
                    if a[i] != b[i]:
                        put("adjudicator", truth[i], "adjudication")
    (project / "audit").mkdir(exist_ok=True)
    for who, lines in files.items():
        (project / "audit" / f"{who}.jsonl").write_text("".join(x + "\n" for x in lines))
    return sum(len(x) for x in files.values())


def audit_cpu(project: Path, repeats: int = 7) -> str:
    """In one process (run as a child): the CPU seconds of the audit's own steps of a warm
    ``gamut score`` (reading the cached labels, the corrections, the two tables) and of the
    whole warm score, each the median of ``repeats``; less disturbed by other load than wall
    time. Returns one line of JSON."""
    from gamut import pipeline
    from gamut.config import load_config
    from gamut.project import Project
    from scoring import tables as T
    from scoring.tables import load_inputs
    from scoring.tables.scores import compute

    cfg = load_config(project / "gamut-audit.toml")
    p = Project(cfg)
    inputs = load_inputs(p.questions, p.check_table, p.submissions_root, tuple(cfg.judges),
                         p.verdict_table, rubrics_source=cfg.benchmark.rubrics,
                         digests=p.digests, matrix_cache=p.private / "matrix")  # fmt: skip
    sc = compute(inputs, cfg.scoring, cfg.primary_judge)
    steps, whole = [], []
    for _ in range(repeats):
        t = time.process_time()
        labels = pipeline.audit_labels(p, inputs)
        _corrected, final = T._audit_parts(sc, labels)
        list(T._audit_tables(sc, labels, final))
        steps.append(time.process_time() - t)
        t = time.process_time()
        pipeline.score(Project(load_config(project / "gamut.toml")))
        whole.append(time.process_time() - t)
    return json.dumps({"audit": statistics.median(steps), "score": statistics.median(whole)})


def cost(runs: int, keep: Path | None) -> None:
    """Part 1: the time and memory the audit adds to a warm ``gamut score``."""
    out = keep or Path(tempfile.mkdtemp(prefix="gamut-bench-audit-"))
    try:
        code = (
            "import sys; from pathlib import Path; from gamut.synthetic.paper import "
            "write_paper_scale; print(write_paper_scale(Path(sys.argv[1])))"
        )
        done = subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=ROOT,
                              capture_output=True, text=True)  # fmt: skip
        plain = Path(done.stdout.strip().splitlines()[-1])
        code = (
            "import sys; from pathlib import Path; from benchmarks.bench_audit import "
            "write_labels; print(write_labels(Path(sys.argv[1])))"
        )
        done = subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=ROOT,
                              capture_output=True, text=True)  # fmt: skip
        n_lines = int(done.stdout.strip().splitlines()[-1])
        audited = plain.with_name("gamut-audit.toml")
        text = plain.read_text().replace("[benchmark]\n", '[benchmark]\naudit = "audit"\n', 1)
        audited.write_text(text)
        size = sum(p.stat().st_size for p in (out / "audit").glob("*.jsonl"))
        print(f"paper-scale project with {n_lines:,} label lines ({size / 1e6:.1f} MB) in {out}")
        print(f"load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        cold = run_once(audited)[0]  # parses the labels, fills the private caches
        print(f"first run with the audit (labels parsed and cached): {cold:.2f} s wall")
        run_once(plain)  # every timed run below is warm
        figures: dict[str, list[tuple[float, float, float]]] = {"plain": [], "audit": []}
        for r in range(runs):
            for kind, config in (("plain", plain), ("audit", audited)):
                wall, cpu, mb = run_once(config)
                figures[kind].append((wall, cpu, mb))
                print(f"round {r + 1} {kind}: {wall:.2f} s wall ({cpu:.2f} s CPU), {mb:,.0f} MB")
        med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v),
                   max(m for _, _, m in v)) for k, v in figures.items()}  # fmt: skip
        added = med["audit"][0] - med["plain"][0]
        share = added / med["plain"][0]
        print(
            f"warm gamut score, median of {runs}: without audit {med['plain'][0]:.2f} s "
            f"({med['plain'][1]:.2f} s CPU, {med['plain'][2]:,.0f} MB peak); with audit "
            f"{med['audit'][0]:.2f} s ({med['audit'][1]:.2f} s CPU, {med['audit'][2]:,.0f} MB)"
        )
        print(
            f"the audit adds {added:+.3f} s wall ({share:+.1%}), "
            f"{med['audit'][1] - med['plain'][1]:+.3f} s CPU, "
            f"{med['audit'][2] - med['plain'][2]:+,.0f} MB peak (target under "
            f"{TARGET_SHARE:.0%}: {'met' if share < TARGET_SHARE else 'MISSED'})"
        )
        code = (
            "import sys; from pathlib import Path; from benchmarks.bench_audit import "
            "audit_cpu; print(audit_cpu(Path(sys.argv[1])))"
        )
        done = subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=ROOT,
                              capture_output=True, text=True)  # fmt: skip
        cpu = json.loads(done.stdout.strip().splitlines()[-1])
        share = cpu["audit"] / cpu["score"]
        print(
            f"in one process, CPU medians of 7: the audit's own steps {cpu['audit'] * 1000:.0f} ms "
            f"beside {cpu['score']:.2f} s for a warm score without them ({share:.1%}; target "
            f"under {TARGET_SHARE:.0%}: {'met' if share < TARGET_SHARE else 'MISSED'})"
        )
    finally:
        if keep is None:
            shutil.rmtree(out, ignore_errors=True)


def _verdicts(rng: np.random.Generator, n_q: int, k: int) -> np.ndarray:
    """True verdict codes ``[n_q, k]``: each question its own mix, so question scores vary."""
    quality = rng.beta(2.0, 1.5, size=(n_q, 1))
    u = rng.random((n_q, k))
    meets = u < quality * 0.75
    partial = ~meets & (u < quality * 0.75 + 0.12)
    contra = ~meets & ~partial & (u > 1 - 0.06 * (1 - quality))
    return np.select([meets, partial, contra], [0, 1, 3], 2).astype(np.int8)


def coverage(seeds: int) -> None:
    """Part 2: coverage of the PPI interval against the judge's and the humans-only ones."""
    from scoring.parameters import ScoringConfig
    from scoring.scorer import gamut_scores, tier_scores
    from scoring.tables.audit import ppi_mean
    from scoring.tables.bootstrap import estimate, resample_weights

    cfg = ScoringConfig()
    n_q, k, n_boot = 1813, 35, 1000
    n_audit = round(AUDIT_SHARE * n_q)
    tier = np.repeat([0, 1, 2], [12, 15, 8])  # AC, V, C checks of a question

    def scores(v: np.ndarray) -> np.ndarray:
        counts = np.stack([np.stack([(v[:, tier == t] == c).sum(1) for c in range(4)], -1)
                           for t in range(3)], 1)  # fmt: skip
        return gamut_scores(tier_scores(counts, cfg), cfg)

    def lenient(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        r = rng.random(v.shape)
        out = v.copy()
        out[(v == 2) & (r < 0.25)] = 1
        out[(v == 1) & (r < 0.35)] = 0
        return out

    big = np.random.default_rng(10**6)
    truth_v = _verdicts(big, 400_000, k)
    truth = float(scores(truth_v).mean())  # the population mean, to within about 0.0005
    del truth_v
    weights = resample_weights(n_q, n_boot, 7)
    hits = {"ppi": 0, "judge": 0, "humans": 0}
    widths: dict[str, list[float]] = {name: [] for name in hits}
    t0 = time.perf_counter()
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        human_v = _verdicts(rng, n_q, k)
        s_h, s_j = scores(human_v), scores(lenient(human_v, rng))
        audited = np.zeros(n_q, np.bool_)
        audited[rng.choice(n_q, n_audit, replace=False)] = True
        est = ppi_mean(s_j, s_h, audited)
        judge = estimate(weights, s_j[None, :])
        half = 1.96 * s_h[audited].std(ddof=1) / math.sqrt(n_audit)
        intervals = {
            "ppi": (est.lo, est.hi),
            "judge": (float(judge.lo[0]), float(judge.hi[0])),
            "humans": (s_h[audited].mean() - half, s_h[audited].mean() + half),
        }
        for name, (lo, hi) in intervals.items():
            hits[name] += lo <= truth <= hi
            widths[name].append(100 * (hi - lo))
    print(
        f"coverage over {seeds} seeds ({n_q} questions, {n_audit} audited, lenient judge; true "
        f"score {100 * truth:.2f}; {time.perf_counter() - t0:.1f} s):"
    )
    labels = {"ppi": "PPI-corrected", "judge": "judge only (bootstrap)",
              "humans": "humans only (audited questions)"}  # fmt: skip
    for name, label in labels.items():
        rate = hits[name] / seeds
        note = ""
        if name == "ppi":
            note = f" (target 93-97%: {'met' if 0.93 <= rate <= 0.97 else 'MISSED'})"
        width = statistics.fmean(widths[name])
        print(f"  {label}: {rate:.1%}, mean width {width:.2f} points{note}")


def main() -> None:
    """Run both parts and print their figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="Timed rounds of each kind.")
    ap.add_argument("--seeds", type=int, default=200, help="Seeds of the coverage study.")
    ap.add_argument("--skip-cost", action="store_true", help="Only the coverage study.")
    ap.add_argument("--keep", type=Path, help="Write the project here and keep it.")
    args = ap.parse_args()
    if not args.skip_cost:
        cost(args.runs, args.keep)
    coverage(args.seeds)


if __name__ == "__main__":
    main()
