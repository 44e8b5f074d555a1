"""Every pair of models compared on the same questions: the paired score difference with its
bootstrap interval, on how many questions each scored higher, and the leaderboard ranking's own
Holm-adjusted significance (so a tie group never holds a significant pair).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.tables.bootstrap import ALPHA, percentile_ci
from scoring.tables.columns import TABLES
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Scores

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


class PairedDifferences(NamedTuple):
    """``[n, n]`` matrices over models, entry (a, b) about a minus b: the point estimate and the
    (expanded) percentile interval of the resampled differences."""

    diff: Array
    lo: Array
    hi: Array


def paired_differences(
    value: Array, boot: Array, n_questions: int | None = None
) -> PairedDifferences:
    """Score differences between every pair of models, ``[n]`` estimates with ``[B, n]``
    resamples, with paired bootstrap intervals (expanded for ``n_questions``; None: the plain
    2.5-97.5 percentiles)."""
    n = value.size
    diff = value[:, None] - value[None, :]
    resampled = (boot[:, :, None] - boot[:, None, :]).reshape(boot.shape[0], n * n)
    ci = percentile_ci(resampled, overwrite=True, n=n_questions)
    lo, hi = (x.reshape(n, n) for x in ci)
    return PairedDifferences(diff, lo, hi)


def question_wins(scores: Array, atol: float = 1e-12) -> tuple[Ints, Ints]:
    """``higher[a, b]``, on how many questions a scored higher than b, and ``equal[a, b]``, on how
    many within ``atol``, from ``[n, Q]`` question scores (a NaN leaves a question out)."""
    a, b = scores[:, None, :], scores[None, :, :]
    defined = ~np.isnan(a) & ~np.isnan(b)
    with np.errstate(invalid="ignore"):
        equal = defined & (np.abs(a - b) <= atol)
        higher = defined & ~equal & (a > b)
    return higher.sum(axis=2).astype(np.int64), equal.sum(axis=2).astype(np.int64)


def pairwise(sc: Scores) -> pd.DataFrame:
    """One row per ordered pair of complete models in each (setting, judge)."""
    frames = []
    for (k, j), (idx, ranking) in sorted(sc.rankings.items()):
        n = idx.size
        if n < 2:
            continue
        d = paired_differences(sc.gamut.value[idx], sc.gamut.boot[:, idx], sc.level.gamut.shape[1])
        higher, equal = question_wins(sc.level.gamut[idx])
        a, b = np.nonzero(~np.eye(n, dtype=np.bool_))  # every ordered pair, a before b
        subs = np.array(sc.inputs.submission_ids, dtype=object)[sc.groups.sub[idx]]
        frames.append(
            pd.DataFrame(
                {
                    "setting": SETTINGS[k].value,
                    "judge": sc.inputs.judges[j],
                    "submission_a": subs[a],
                    "submission_b": subs[b],
                    "diff": d.diff[a, b],
                    "diff_lo": d.lo[a, b],
                    "diff_hi": d.hi[a, b],
                    "significant": ranking.p_adjusted[a, b] < ALPHA,
                    "p_adjusted": ranking.p_adjusted[a, b],
                    "n_questions": higher[a, b] + higher[b, a] + equal[a, b],
                    "n_a_higher": higher[a, b],
                    "n_b_higher": higher[b, a],
                    "n_equal": equal[a, b],
                }
            )
        )
    if frames:
        return pd.concat(frames, ignore_index=True)[list(TABLES["pairwise"])]
    types = {"string": "object", "bool": "bool", "int64": "int64", "double": "float64"}
    return pd.DataFrame({c: pd.Series(dtype=types[t]) for c, (t, _) in TABLES["pairwise"].items()})
