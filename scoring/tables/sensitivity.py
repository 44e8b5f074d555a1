"""How far the ranking depends on the judge and on the question sample (issue 23).

- ``rank_sensitivity``: each model's rank under every judge beside the primary judge's, among
  the models complete under every judge, and the largest change between any two judges.
- ``judge_family_matrix``: the self-preference matrix, the mean score a judge of family F gives
  the models of family G minus the other judges' mean score of the same models.
- ``min_detectable_difference``: per board (all questions, each domain) and setting, the
  smallest Gamut-score difference between two models that the question sample detects with 80%
  power at a two-sided alpha of 0.05, from the paired question-score differences of models that
  are neighbours in the judge's ranking: ``100 (t_0.975 + t_0.8) sd(d) / sqrt(n)`` (Student's t
  with n - 1 degrees of freedom) with the
  median over neighbouring pairs of the sample standard deviation ``sd(d)`` of their paired
  differences on the board's ``n`` questions.

Pure arithmetic on :class:`~scoring.tables.scores.Scores`, no I/O.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Groups, Scores

ALL_QUESTIONS = "all"

RANK_COLUMNS = [
    "setting",
    "submission_id",
    "judge",
    "primary",
    "compared",
    "rank",
    "primary_rank",
    "rank_change",
    "max_rank_change",
]
MATRIX_COLUMNS = [
    "setting",
    "judge",
    "judge_family",
    "model_family",
    "n_models",
    "judge_score",
    "others_score",
    "difference",
]
MDD_COLUMNS = ["setting", "judge", "board", "n_questions", "n_pairs", "sd_paired", "mdd"]


def _scores(sc: Scores, k: int) -> npt.NDArray[np.float64]:
    """``[S, J]`` Gamut score of each submission under each judge in setting ``k`` (NaN: not
    complete)."""
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    g = Groups.index(np.arange(n_s)[:, None], k, np.arange(n_j)[None, :], n_j)
    return np.where(sc.complete[g], sc.gamut.value[g], np.nan)


def rank_sensitivity(sc: Scores) -> pd.DataFrame:
    """One row per (setting, model ranked by the primary judge, judge).

    Ranks are taken among the models complete under every judge (``compared``), so that every
    judge ranks the same models; the others keep empty ranks. ``max_rank_change`` is the largest
    difference between the model's ranks under any two judges.
    """
    rows: list[dict[str, Any]] = []
    p = sc.primary
    for k, setting in enumerate(SETTINGS):
        value = _scores(sc, k)
        common = np.asarray(~np.isnan(value).any(axis=1), np.bool_)
        ranks = np.full(value.shape, np.nan)
        ranks[common] = (value[common][None, :, :] > value[common][:, None, :]).sum(axis=1) + 1
        for s in np.flatnonzero(~np.isnan(value[:, p])):
            change = ranks[s] - ranks[s, p]
            largest = np.ptp(ranks[s]) if common[s] else np.nan
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
                        "rank_change": change[j],
                        "max_rank_change": largest,
                    }
                )
    df = pd.DataFrame(rows, columns=RANK_COLUMNS)
    df["compared"] = df["compared"].astype(bool)
    for c in ("rank", "primary_rank", "rank_change", "max_rank_change"):
        df[c] = pd.array(df[c].to_numpy(np.float64), dtype="Float64").astype("Int64")
    return df


def judge_family_matrix(sc: Scores, families: dict[str, str]) -> pd.DataFrame:
    """One row per (setting, judge, model family): the judge's mean score of that family's models
    minus the other judges' mean score of them (models complete under every judge)."""
    fam = np.array(
        [sc.inputs.meta[s].model_family.strip().lower() for s in sc.inputs.submission_ids], object
    )
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        s, j = np.divmod(np.arange(n_s * n_j, dtype=np.int64), n_j)
        g = Groups.index(s, k, j, n_j)
        value = sc.gamut.value[g].reshape(n_s, n_j)
        done = sc.complete[g].reshape(n_s, n_j).all(axis=1) if n_j else np.zeros(0, np.bool_)
        for jj, name in enumerate(sc.inputs.judges):
            others = [i for i in range(n_j) if i != jj]
            for family in sorted(set(fam[done])):
                sel = done & (fam == family)
                mine = float(value[sel, jj].mean())
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
    return pd.DataFrame(rows, columns=MATRIX_COLUMNS)


def mdd(sd: float, n: int) -> float:
    """The minimum detectable difference (points) for paired differences of sd ``sd`` over
    ``n`` questions, with Student's t quantiles of ``n - 1`` degrees of freedom (the paired t
    test's): ``100 (t_0.975 + t_0.8) sd / sqrt(n)``; the normal ones understate it by a third at
    4 questions."""
    from scipy.special import stdtrit  # imported when scoring, not with the command line

    if n < 2 or not math.isfinite(sd):
        return float("nan")
    quantiles = float(stdtrit(n - 1, 0.975) + stdtrit(n - 1, 0.8))
    return 100.0 * quantiles * sd / math.sqrt(n)


def min_detectable_difference(sc: Scores) -> pd.DataFrame:
    """One row per (setting, judge, board): the board is ``all`` or ``domain:<name>``."""
    domains = np.array([q.domain for q in sc.inputs.questions], object)
    boards = [(ALL_QUESTIONS, np.ones(domains.size, np.bool_))] + [
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
    return pd.DataFrame(rows, columns=MDD_COLUMNS)


__all__ = [
    "ALL_QUESTIONS",
    "judge_family_matrix",
    "mdd",
    "min_detectable_difference",
    "rank_sensitivity",
]
