"""Judge agreement tables: per-judge scores, Kendall tau, leniency, self-preference, Cohen's kappa,
on the models both judges judged completely and the shared question resamples (``bootstrap``).
"""

from __future__ import annotations

from itertools import combinations, product
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.tables.bootstrap import percentile_ci
from scoring.tables.checks import N_KIND_KEYS, kind_of
from scoring.tables.columns import MIN_KIND_CHECKS, TABLES
from scoring.tables.core import N_VERDICTS
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Groups, Scores

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def kendall_tau_b(x: Floats, y: Floats) -> float:
    """Kendall's tau-b (``scipy.stats.kendalltau``'s statistic, without SciPy's import time) over
    all pairs; NaN with fewer than two models or no variation."""
    if x.size < 2:
        return float("nan")
    iu = np.triu_indices(x.size, 1)
    dx = np.sign(x[:, None] - x[None, :])[iu]
    dy = np.sign(y[:, None] - y[None, :])[iu]
    untied_x, untied_y = np.count_nonzero(dx), np.count_nonzero(dy)
    if untied_x == 0 or untied_y == 0:
        return float("nan")
    return float((dx * dy).sum() / np.sqrt(float(untied_x) * float(untied_y)))


def cohen_kappa(confusion: npt.NDArray[np.int64]) -> tuple[float, float, int]:
    """Cohen's kappa (NaN when chance agreement is 1), raw agreement and the number of rated
    items of a square confusion table."""
    figures = confusion_figures(confusion)
    n = int(confusion.sum())
    return float(figures["kappa"]), float(figures["agreement"]), n


def confusion_figures(confusion: npt.NDArray[Any]) -> dict[str, Floats]:
    """Agreement figures of ``[..., k, k]`` confusion tables (possibly resampled counts):
    ``agreement``, ``kappa`` (Cohen's), ``kappa_linear`` (weights 1 - |i - j| / (k - 1) in code
    order) and ``macro_f1`` (over the categories either labelling uses); NaN for an empty table,
    a kappa NaN when its chance agreement is 1."""
    c = np.asarray(confusion, np.float64)
    k = c.shape[-1]
    idx = np.arange(k)
    weight = 1.0 - np.abs(idx[:, None] - idx[None, :]) / (k - 1)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rows, cols = c.sum(axis=-1) / n[..., None], c.sum(axis=-2) / n[..., None]
        diagonal = np.diagonal(c, axis1=-2, axis2=-1) / n[..., None]
        chance = ((rows @ weight) * cols).sum(axis=-1)
        observed_w = (c.reshape(*c.shape[:-2], k * k) @ weight.ravel()) / n
        observed = diagonal.sum(axis=-1)
        plain = (rows * cols).sum(axis=-1)
        den = rows + cols
        f1 = np.where(den > 0, 2 * diagonal / den, np.nan)
        used = (den > 0).sum(axis=-1)
        macro = np.where(used > 0, np.nansum(f1, axis=-1) / used, np.nan)
        return {
            "agreement": np.where(n > 0, observed, np.nan),
            "kappa": np.where(plain < 1.0, (observed - plain) / (1.0 - plain), np.nan),
            "kappa_linear": np.where(chance < 1.0, (observed_w - chance) / (1.0 - chance), np.nan),
            "macro_f1": macro,
        }


def agreement_intervals(
    per_question: npt.NDArray[np.int64], weights: Floats, min_checks: int | Ints = 1
) -> dict[str, tuple[Floats, Floats]]:
    """figure -> (lo, hi), each ``[T]``: 95% expanded percentile intervals of
    :func:`confusion_figures` of T tables given per question, ``[Q, T, k, k]``, over questions
    (a resample takes every check of a drawn question, with the scores' ``weights``). A table
    with fewer than ``min_checks`` checks (one floor or one per table) gets NaN intervals."""
    flat = per_question.reshape(per_question.shape[0], -1)
    used = np.flatnonzero(flat.any(axis=1))  # the labelled questions: few in an audit
    w = weights if used.size == flat.shape[0] else weights[:, used]
    # counts and multiplicities are small integers: exact in float32, at half the cost
    boot = (w.astype(np.float32) @ flat[used].astype(np.float32)).astype(np.float64)
    figures = confusion_figures(boot.reshape(-1, *per_question.shape[1:]))
    checks = per_question.sum(axis=(2, 3))
    n_questions = (checks > 0).sum(axis=0).astype(np.int64)
    few = checks.sum(axis=0) < min_checks
    out = {}
    for name in ("agreement", "kappa", "kappa_linear", "macro_f1"):
        lo, hi = percentile_ci(figures[name], overwrite=True, n=n_questions)
        out[name] = (np.where(few, np.nan, lo), np.where(few, np.nan, hi))
    return out


def per_judge(sc: Scores, setting: int) -> tuple[Floats, Floats, npt.NDArray[np.bool_]]:
    """Score ``[S, J]``, resampled scores ``[B, S, J]`` and completeness ``[S, J]`` of a setting."""
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    g = Groups.index(np.arange(n_s)[:, None], setting, np.arange(n_j)[None, :], n_j)
    return sc.gamut.value[g], sc.gamut.boot[:, g], sc.complete[g]


def judge_scores(leaderboard: pd.DataFrame) -> pd.DataFrame:
    """Each judge's leaderboard: the complete rows with score, CI and rank."""
    rows = leaderboard[leaderboard["status"] == "complete"]
    return rows[list(TABLES["judge_scores"])].reset_index(drop=True)


def judge_tau(sc: Scores) -> pd.DataFrame:
    """Per setting and pair of judges: Kendall tau-b of their scores and the largest difference."""
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        value, _, done = per_judge(sc, k)
        for a, b in combinations(range(len(sc.inputs.judges)), 2):
            both = np.flatnonzero(done[:, a] & done[:, b])
            diff = np.abs(value[both, a] - value[both, b])
            worst = sc.inputs.submission_ids[int(both[np.argmax(diff)])] if both.size else None
            rows.append(
                {
                    "setting": setting.value,
                    "judge_a": sc.inputs.judges[a],
                    "judge_b": sc.inputs.judges[b],
                    "n_models": int(both.size),
                    "tau_b": kendall_tau_b(value[both, a], value[both, b]),
                    "max_abs_diff": float(diff.max()) if both.size else float("nan"),
                    "max_diff_submission": worst,
                }
            )
    return pd.DataFrame(rows, columns=list(TABLES["judge_tau"]))


def judge_leniency(sc: Scores) -> pd.DataFrame:
    """Per setting and judge: mean paired score difference judge - primary over shared models."""
    rows: list[dict[str, Any]] = []
    p, n_q = sc.primary, sc.level.gamut.shape[1]
    for k, setting in enumerate(SETTINGS):
        value, boot, done = per_judge(sc, k)
        for j, name in enumerate(sc.inputs.judges):
            both = np.flatnonzero(done[:, j] & done[:, p])
            with np.errstate(invalid="ignore"):  # no model in common: NaN
                d = (boot[:, both, j] - boot[:, both, p]).sum(axis=1) / both.size
                offset = (value[both, j] - value[both, p]).sum() / both.size
            lo, hi = percentile_ci(d[:, None], n=n_q)
            rows.append(
                {
                    "setting": setting.value,
                    "judge": name,
                    "primary": j == p,
                    "n_models": int(both.size),
                    "offset": float(offset),
                    "offset_lo": float(lo[0]),
                    "offset_hi": float(hi[0]),
                }
            )
    return pd.DataFrame(rows, columns=list(TABLES["judge_leniency"]))


def _preference(
    value: Floats, boot: Floats, j: int, others: list[int], own: npt.NDArray[np.bool_], n_q: int
) -> tuple[float, float, float, float, float]:
    """Judge ``j``'s score of the ``own`` models minus the mean of the ``others`` judges' (the
    gap), the same gap on the other models, their difference (the self-preference) and its
    interval from the shared resamples. ``value`` is ``[S, J]``, ``boot`` ``[B, S, J]``."""

    def gap(v: Floats, sel: npt.NDArray[np.bool_]) -> Floats:
        rest = v[..., others].mean(axis=-1) if others else np.full(v.shape[:-1], np.nan)
        d = (v[..., j] - rest)[..., sel]
        return d.mean(axis=-1) if sel.any() else np.full(d.shape[:-1], np.nan)

    own_gap, other_gap = float(gap(value, own)), float(gap(value, ~own))
    lo, hi = percentile_ci((gap(boot, own) - gap(boot, ~own))[:, None], n=n_q)
    return own_gap, other_gap, own_gap - other_gap, float(lo[0]), float(hi[0])


def model_families(sc: Scores) -> npt.NDArray[np.object_]:
    """``[S]`` each submission's model family, lower case."""
    meta = sc.inputs.meta
    return np.array(
        [meta[s].model_family.strip().lower() for s in sc.inputs.submission_ids], object
    )


def judge_self_preference(sc: Scores, families: dict[str, str]) -> pd.DataFrame:
    """Per setting and judge: how much more a judge favours its own family's models than others
    do (against every other judge, and against the primary judge alone), over the models
    complete under every judge."""
    fam = model_families(sc)
    n_j, n_q, p = len(sc.inputs.judges), sc.level.gamut.shape[1], sc.primary
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        value, boot, done = per_judge(sc, k)
        models = done.all(axis=1)
        value, boot = value[models], boot[:, models]
        for j, name in enumerate(sc.inputs.judges):
            own = fam[models] == families[name].strip().lower()
            everyone = [i for i in range(n_j) if i != j]
            own_gap, other_gap, pref, lo, hi = _preference(value, boot, j, everyone, own, n_q)
            alone = _preference(value, boot, j, [p], own, n_q)[2:] if j != p else (np.nan,) * 3
            own_score = float(value[own, j].mean()) if own.any() else np.nan
            rows.append(
                {
                    "setting": setting.value,
                    "judge": name,
                    "family": families[name],
                    "n_own": int(own.sum()),
                    "n_other": int((~own).sum()),
                    "own_score": own_score,
                    "others_score_of_own": own_score - own_gap,
                    "own_minus_others": own_gap,
                    "other_families_diff": other_gap,
                    "self_preference": pref,
                    "self_preference_lo": lo,
                    "self_preference_hi": hi,
                    "self_preference_primary": alone[0],
                    "self_preference_primary_lo": alone[1],
                    "self_preference_primary_hi": alone[2],
                }
            )
    return pd.DataFrame(rows, columns=list(TABLES["judge_self_preference"]))


def with_total(per_question: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``[Q, T, k, k]`` tables with their sum over T (the table of every check) first."""
    return np.concatenate([per_question.sum(axis=1, keepdims=True), per_question], axis=1)


def _kind_confusions(sc: Scores, k: int, a: int, b: int) -> npt.NDArray[np.int64]:
    """``[Q, kind keys, verdicts, verdicts]`` confusion tables of judges ``a`` and ``b`` in a
    setting: one ``np.bincount`` over the (submission, check) cells both judged."""
    checks, n_q = sc.inputs.checks, len(sc.inputs.questions)
    n_s, n_j, v = len(sc.inputs.submission_ids), len(sc.inputs.judges), sc.inputs.verdicts
    s = np.arange(n_s, dtype=np.int64)
    va, vb = v[Groups.index(s, k, a, n_j)], v[Groups.index(s, k, b, n_j)]
    key = checks.question.astype(np.int64) * N_KIND_KEYS + checks.kind_key
    cell = (key[None, :] * N_VERDICTS + va) * N_VERDICTS + vb  # int64, as key is: no overflow
    confusion = np.bincount(
        cell[(va >= 0) & (vb >= 0)], minlength=n_q * N_KIND_KEYS * N_VERDICTS**2
    )
    return confusion.reshape(n_q, N_KIND_KEYS, N_VERDICTS, N_VERDICTS)


def kappa_tables(sc: Scores) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``judge_kappa`` and ``judge_kappa_by_kind``: per setting and pair of judges, Cohen's kappa
    and raw agreement with intervals over questions, over every check both judged and per check
    kind and secondary flag (``by_kind``'s split; NaN kappa and intervals under
    :data:`MIN_KIND_CHECKS` shared checks), every pair's tables resampled in one product."""
    present = np.flatnonzero(np.bincount(sc.inputs.checks.kind_key, minlength=N_KIND_KEYS))
    kinds = [
        (None, None),
        *((kind.value, second) for kind, second in map(kind_of, present.tolist())),
    ]
    judges = sc.inputs.judges
    pairs = [
        (k, a, b) for k in range(len(SETTINGS)) for a, b in combinations(range(len(judges)), 2)
    ]
    rows = []
    if pairs:  # not a single judge
        stacked = np.concatenate(
            [with_total(_kind_confusions(sc, *p)[:, present]) for p in pairs], 1
        )
        floor = np.tile([1] + [MIN_KIND_CHECKS] * present.size, len(pairs))
        tables = stacked.sum(axis=0)
        n = tables.sum(axis=(1, 2))
        point = confusion_figures(tables)
        ci = agreement_intervals(stacked, sc.weights, floor)
        for t, ((k, a, b), (kind, secondary)) in enumerate(product(pairs, kinds)):
            rows.append(
                {
                    "setting": SETTINGS[k].value,
                    "judge_a": judges[a],
                    "judge_b": judges[b],
                    "kind": kind,
                    "secondary": secondary,
                    "kappa": np.nan if n[t] < floor[t] else float(point["kappa"][t]),
                    "kappa_lo": float(ci["kappa"][0][t]),
                    "kappa_hi": float(ci["kappa"][1][t]),
                    "n_checks": int(n[t]),
                    "agreement": float(point["agreement"][t]),
                    "agreement_lo": float(ci["agreement"][0][t]),
                    "agreement_hi": float(ci["agreement"][1][t]),
                }
            )
    df = pd.DataFrame(rows, columns=list(TABLES["judge_kappa_by_kind"]))
    every = df["kind"].isna()
    overall = df[every][list(TABLES["judge_kappa"])].reset_index(drop=True)
    by_kind = df[~every].reset_index(drop=True)
    floats = [c for c in by_kind.columns[5:] if c != "n_checks"]
    types = {"secondary": np.bool_, "n_checks": np.int64, **dict.fromkeys(floats, float)}
    return overall, by_kind.astype(types)
