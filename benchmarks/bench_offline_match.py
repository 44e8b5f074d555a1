"""The demo's offline matcher against the demo's known labels: agreement and speed.

Runs the matcher over every (response, check) pair that the ``oracle`` replay file holds (the
known labels of the six synthetic demo models) and prints how often it gives the label, the
confusion counts and the verdicts per second. Prints the measured figures; asserts nothing.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from scoring.compiler import compile_rubric
from scoring.judge.offline_match import MATCHER_VERSION, match_verdict
from scoring.rubric_io import load_rubrics
from scoring.verdicts import VERDICT_ORDER

DEMO = Path(__file__).resolve().parents[1] / "demo"


def main() -> None:
    rubrics = load_rubrics([DEMO / "rubrics"], held=False)
    checks = {(q, c.check_id): c for q, r in rubrics.items() for c in compile_rubric(r)}
    responses: dict[tuple[str, str, str], str] = {}
    for folder in sorted((DEMO / "submissions").iterdir()):
        for setting in ("multimodal", "text_only"):
            path = folder / f"{setting}.jsonl"
            if path.is_file():
                for line in path.read_text(encoding="utf-8").splitlines():
                    row = json.loads(line)
                    responses[(folder.name, setting, row["question_id"])] = row["response"]
    labels = pd.read_parquet(DEMO / "verdicts" / "oracle.parquet")
    pairs = []
    for row in labels.itertuples():
        check = checks.get((str(row.question_id), str(row.check_id)))
        text = responses.get((str(row.submission_id), str(row.setting), str(row.question_id)))
        if check is not None and text is not None:
            word = row.verdict if isinstance(row.verdict, str) else VERDICT_ORDER[row.verdict]
            pairs.append((check, text, str(word)))
    t0 = time.perf_counter()
    confusion = Counter(
        (label, match_verdict(c.kind, c.text, text).verdict.value) for c, text, label in pairs
    )
    elapsed = time.perf_counter() - t0
    agree = sum(n for (label, got), n in confusion.items() if label == got)
    print(f"{MATCHER_VERSION} against the demo's known labels (oracle):")
    print(f"  pairs: {len(pairs):,}; agreement: {agree / len(pairs):.1%}")
    print(f"  {len(pairs) / elapsed:,.0f} verdicts/s ({elapsed:.2f} s)")
    for (label, got), n in sorted(confusion.items()):
        print(f"  label {label:<16} matcher {got:<16} {n:>6,}")


if __name__ == "__main__":
    main()
