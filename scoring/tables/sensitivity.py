"""How far the ranking depends on the judge and on the question sample (issue 23): ranks under
every judge, the judge family x model family matrix, and the minimum detectable difference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from scoring.tables.columns import TABLES
from scoring.tables.judges import model_families, per_judge
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Scores


def rank_sensitivity(sc: Scores) -> pd.DataFrame:
    """One row per (setting, model ranked by the primary judge, judge): ranks among the models
    complete under every judge (``compared``; the others keep empty ranks)."""
    rows: list[dict[str, Any]] = []
    p = sc.primary
    for k, setting in enumerate(SETTINGS):
        value, _, done = per_judge(sc, k)
        value = np.where(done, value, np.nan)
        common = np.asarray(~np.isnan(value).any(axis=1), np.bool_)
        ranks = np.full(value.shape, np.nan)
        ranks[common] = (value[common][None, :, :] > value[common][:, None, :]).sum(axis=1) + 1
        for s in np.flatnonzero(~np.isnan(value[:, p])):
            for j, name in enumerate(sc.inputs.judges):
                rows.append(
                    {
                        "setting": setting.value,
                        "submission_id": sc.inputs.submission_ids[int(s)],
                        "judge": name,
                        "primary": j == p,
                        "compared": bool(common[s]),
                        "rank": ranks[s, j],
                        "primary_rank": ranks[s, p],
                        "rank_change": ranks[s, j] - ranks[s, p],
                        "max_rank_change": np.ptp(ranks[s]) if common[s] else np.nan,
                    }
                )
    df = pd.DataFrame(rows, columns=list(TABLES["rank_sensitivity"]))
    df["compared"] = df["compared"].astype(bool)
    for c in ("rank", "primary_rank", "rank_change", "max_rank_change"):
        df[c] = pd.array(df[c].to_numpy(np.float64), dtype="Float64").astype("Int64")
    return df


def judge_family_matrix(sc: Scores, families: dict[str, str]) -> pd.DataFrame:
    """One row per (setting, judge, model family): the judge's mean score of that family's models
    minus the other judges' mean score of them (models complete under every judge)."""
    fam = model_families(sc)
    n_j = len(sc.inputs.judges)
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        value, _, done = per_judge(sc, k)
        models = done.all(axis=1)
        for j, name in enumerate(sc.inputs.judges):
            others = [i for i in range(n_j) if i != j]
            for family in sorted(set(fam[models])):
                sel = models & (fam == family)
                mine = float(value[sel, j].mean())
                rest = float(value[sel][:, others].mean()) if others else float("nan")
                rows.append(
                    {
                        "setting": setting.value,
                        "judge": name,
                        "judge_family": families[name],
                        "model_family": str(family),
                        "n_models": int(sel.sum()),
                        "judge_score": mine,
                        "others_score": rest,
                        "difference": mine - rest,
                    }
                )
    return pd.DataFrame(rows, columns=list(TABLES["judge_family_matrix"]))


def mdd(sd: float, n: int) -> float:
    """The minimum detectable difference (points) for paired differences of sd ``sd`` over ``n``
    questions, 80% power at two-sided alpha 0.05: ``100 (t_0.975 + t_0.8) sd / sqrt(n)`` with the
    paired t test's ``n - 1`` degrees of freedom (normal quantiles understate it a third at 4)."""
    from scipy.special import stdtrit  # imported when scoring, not with the command line

    if n < 2 or not math.isfinite(sd):
        return float("nan")
    quantiles = float(stdtrit(n - 1, 0.975) + stdtrit(n - 1, 0.8))
    return 100.0 * quantiles * sd / math.sqrt(n)


def min_detectable_difference(sc: Scores) -> pd.DataFrame:
    """One row per (setting, judge, board: ``all`` or ``domain:<name>``): :func:`mdd` of the
    median over models neighbouring in the judge's ranking of the sample standard deviation of
    their paired question-score differences on the board."""
    domains = np.array([q.domain for q in sc.inputs.questions], object)
    boards = [("all", np.ones(domains.size, np.bool_))] + [
        (f"domain:{d}", domains == d) for d in sorted(set(domains))
    ]
    rows: list[dict[str, Any]] = []
    for (k, j), (idx, ranking) in sorted(sc.rankings.items()):
        order = idx[np.argsort(ranking.rank, kind="stable")]
        scores = sc.level.gamut[order]  # [models in rank order, Q]
        diffs = scores[1:] - scores[:-1]  # neighbours' paired question-score differences
        for board, member in boards:
            n = int(member.sum())
            d = diffs[:, member]
            sds = d.std(axis=1, ddof=1) if d.shape[0] and n >= 2 else np.zeros(0)
            sd = float(np.median(sds)) if sds.size else float("nan")
            rows.append(
                {
                    "setting": SETTINGS[k].value,
                    "judge": sc.inputs.judges[j],
                    "board": board,
                    "n_questions": n,
                    "n_pairs": int(sds.size),
                    "sd_paired": sd,
                    "mdd": mdd(sd, n),
                }
            )
    return pd.DataFrame(rows, columns=list(TABLES["min_detectable_difference"]))
