"""Agreement of a judge's verdicts with known labels: per-class precision, recall, F1 and kappa
(the engine's, :func:`scoring.tables.judges.cohen_kappa`).

Use it to calibrate a real judge on the demo: its verdicts against ``demo/verdicts/oracle.parquet``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring.tables.judges import cohen_kappa
from scoring.verdicts import PAIR_KEY, VERDICT_ORDER


def _one(truth: np.ndarray, pred: np.ndarray) -> pd.DataFrame:
    rows = []
    for code, verdict in enumerate(VERDICT_ORDER):
        tp = int(np.sum((truth == code) & (pred == code)))
        support, predicted = int(np.sum(truth == code)), int(np.sum(pred == code))
        precision = tp / predicted if predicted else float("nan")
        recall = tp / support if support else float("nan")
        f1 = 2 * tp / (support + predicted) if support + predicted else float("nan")
        rows.append((verdict.value, support, predicted, precision, recall, f1))
    frame = pd.DataFrame(
        rows, columns=["verdict", "support", "predicted", "precision", "recall", "f1"]
    )
    overall = {
        "verdict": "all",
        "support": len(truth),
        "predicted": len(pred),
        "precision": frame.precision.mean(),
        "recall": frame.recall.mean(),
        "f1": frame.f1.mean(),
    }
    frame = pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
    n = len(VERDICT_ORDER)
    confusion = np.bincount(truth * n + pred, minlength=n * n).reshape(n, n)
    frame["kappa"], frame["agreement"], _ = cohen_kappa(confusion)
    return frame


def agreement(labels: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Verdicts against known labels (e.g. ``demo/verdicts/oracle.parquet``) on the checks
    both have, judge by judge when the verdicts have a ``judge`` column (then first): one row
    per verdict class and an ``all`` row (macro-averaged precision, recall and F1), with the
    overall ``agreement`` and ``kappa`` repeated on every row."""
    key = [k for k in PAIR_KEY if k in labels.columns and k in verdicts.columns]
    left = labels[[*key, "verdict"]].astype(str)
    right_cols = [*key, "verdict"] + (["judge"] if "judge" in verdicts.columns else [])
    right = verdicts[right_cols].astype(str)
    merged = left.merge(right, on=key, suffixes=("_label", "_judge"))
    codes = {v.value: i for i, v in enumerate(VERDICT_ORDER)}
    by_judge = "judge" in merged.columns
    parts = []
    for judge, group in merged.groupby("judge", sort=True) if by_judge else [("", merged)]:
        part = _one(
            group.verdict_label.map(codes).to_numpy(int),
            group.verdict_judge.map(codes).to_numpy(int),
        )
        if by_judge:
            part.insert(0, "judge", judge)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
