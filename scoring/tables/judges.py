"""Judge agreement tables: per-judge scores, Kendall tau, leniency, self-preference, Cohen's kappa
over all checks and per check kind.

Every comparison between judges is made on the models both judged completely, and every CI of a
difference comes from the shared question resamples (see ``bootstrap``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.tables.bootstrap import percentile_ci
from scoring.tables.checks import N_KIND_KEYS, kind_of
from scoring.tables.core import N_VERDICTS
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Groups, Scores

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: The fewest (response, check) pairs two judges must both have judged for a check kind's kappa
#: in ``judge_kappa_by_kind``; a kind with fewer gets NaN kappa (its agreement is still given).
#: With fewer, kappa's standard error at typical agreement (0.85 observed, 0.4 by chance) is above
#: 0.1, as large as the differences between kinds it is read for. The kappa over all checks
#: (``judge_kappa``) has no such floor.
MIN_KIND_CHECKS = 30


def kendall_tau_b(x: Floats, y: Floats) -> float:
    """Kendall's tau-b between two score vectors (the statistic of ``scipy.stats.kendalltau``).

    Computed over all pairs, which is quick for the tens of models a leaderboard holds and spares
    the command SciPy's import time. NaN with fewer than two models or no variation.
    """
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
    """Cohen's kappa, raw agreement and the number of rated items of a square confusion table.

    Kappa is NaN when chance agreement is 1 (both raters always gave the same single verdict).
    """
    n = int(confusion.sum())
    if n == 0:
        return float("nan"), float("nan"), 0
    p = confusion.astype(np.float64) / n
    observed = float(np.trace(p))
    chance = float(p.sum(axis=1) @ p.sum(axis=0))
    kappa = (observed - chance) / (1.0 - chance) if chance < 1.0 else float("nan")
    return kappa, observed, n


def linear_weighted_kappa(confusion: npt.NDArray[np.int64]) -> float:
    """Cohen's kappa with linear weights 1 - |i - j| / (k - 1) on an ordered k-point scale (the
    verdicts in code order: meets, partially meets, missing, contradicts). NaN with no items or
    when the weighted chance agreement is 1."""
    n = int(confusion.sum())
    if n == 0:
        return float("nan")
    k = confusion.shape[0]
    idx = np.arange(k)
    weight = 1.0 - np.abs(idx[:, None] - idx[None, :]) / (k - 1)
    p = confusion.astype(np.float64) / n
    observed = float((weight * p).sum())
    chance = float((weight * np.outer(p.sum(axis=1), p.sum(axis=0))).sum())
    return (observed - chance) / (1.0 - chance) if chance < 1.0 else float("nan")


def _scores(sc: Scores, setting: int) -> tuple[Floats, Floats, npt.NDArray[np.bool_]]:
    """Score ``[S, J]``, resampled scores ``[B, S, J]`` and completeness ``[S, J]`` of a setting."""
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    s, j = np.divmod(np.arange(n_s * n_j, dtype=np.int64), n_j)
    g = Groups.index(s, setting, j, n_j)
    b = sc.weights.shape[0]
    return (
        sc.gamut.value[g].reshape(n_s, n_j),
        sc.gamut.boot[:, g].reshape(b, n_s, n_j),
        sc.complete[g].reshape(n_s, n_j),
    )


def judge_scores(leaderboard: pd.DataFrame) -> pd.DataFrame:
    """Each judge's leaderboard: the complete rows with score, CI and rank."""
    cols = ["submission_id", "setting", "judge", "primary", "gamut", "gamut_lo", "gamut_hi", "rank"]
    rows = leaderboard[leaderboard["status"] == "complete"]
    return rows[cols].reset_index(drop=True)


def judge_tau(sc: Scores) -> pd.DataFrame:
    """Per setting and pair of judges: Kendall tau-b of their scores and the largest difference."""
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        value, _, done = _scores(sc, k)
        for a, b in combinations(range(len(sc.inputs.judges)), 2):
            both = np.flatnonzero(done[:, a] & done[:, b])
            diff = value[both, a] - value[both, b]
            worst = int(np.argmax(np.abs(diff))) if both.size else -1
            rows.append(
                {
                    "setting": setting.value,
                    "judge_a": sc.inputs.judges[a],
                    "judge_b": sc.inputs.judges[b],
                    "n_models": int(both.size),
                    "tau_b": kendall_tau_b(value[both, a], value[both, b]),
                    "max_abs_diff": float(abs(diff[worst])) if both.size else float("nan"),
                    "max_diff_submission": sc.inputs.submission_ids[int(both[worst])]
                    if both.size
                    else None,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "setting",
            "judge_a",
            "judge_b",
            "n_models",
            "tau_b",
            "max_abs_diff",
            "max_diff_submission",
        ],
    )


def judge_leniency(sc: Scores) -> pd.DataFrame:
    """Per setting and judge: mean paired score difference judge - primary over shared models."""
    rows: list[dict[str, Any]] = []
    p = sc.primary
    for k, setting in enumerate(SETTINGS):
        value, boot, done = _scores(sc, k)
        for j, name in enumerate(sc.inputs.judges):
            both = np.flatnonzero(done[:, j] & done[:, p])
            d = (boot[:, both, j] - boot[:, both, p]).mean(axis=1) if both.size else np.zeros(0)
            n_q = sc.level.gamut.shape[1]
            lo, hi = percentile_ci(d[:, None], n=n_q) if both.size else (np.full(1, np.nan),) * 2
            rows.append(
                {
                    "setting": setting.value,
                    "judge": name,
                    "primary": j == p,
                    "n_models": int(both.size),
                    "offset": float((value[both, j] - value[both, p]).mean())
                    if both.size
                    else np.nan,
                    "offset_lo": float(lo[0]),
                    "offset_hi": float(hi[0]),
                }
            )
    return pd.DataFrame(
        rows,
        columns=["setting", "judge", "primary", "n_models", "offset", "offset_lo", "offset_hi"],
    )


def _nanmean(x: Floats, axis: int) -> Floats:
    if x.shape[axis] == 0:
        shape = list(x.shape)
        del shape[axis]
        return np.full(shape, np.nan)
    return np.asarray(x.mean(axis=axis), np.float64)


def judge_self_preference(sc: Scores, families: dict[str, str]) -> pd.DataFrame:
    """Per setting and judge: how much more a judge favours its own family's models than others do.

    ``own_minus_others`` is the judge's mean score of the models of its own family minus the other
    judges' mean score of the same models; ``other_families_diff`` is the same difference on the
    models of other families; ``self_preference`` is the first minus the second, with a CI from the
    shared resamples. Only models complete under every judge take part.

    Args:
        sc: the computed scores.
        families: judge name -> model family it belongs to.
    """
    fam = [sc.inputs.meta[s].model_family.strip().lower() for s in sc.inputs.submission_ids]
    fam_arr = np.array(fam, dtype=object)
    n_j = len(sc.inputs.judges)
    rows: list[dict[str, Any]] = []
    for k, setting in enumerate(SETTINGS):
        value, boot, done = _scores(sc, k)
        models = done.all(axis=1) if n_j else np.zeros(0, np.bool_)
        for j, name in enumerate(sc.inputs.judges):
            family = families[name]
            own = models & (fam_arr == family.strip().lower())
            other = models & ~own
            others = [i for i in range(n_j) if i != j]

            def gap(
                v: Floats, sel: npt.NDArray[np.bool_], j: int = j, others: list[int] = others
            ) -> Floats:
                # v[..., S, J] -> judge j minus the other judges, mean over the selected models
                rest = v[..., others].mean(axis=-1) if others else np.full(v.shape[:-1], np.nan)
                return _nanmean((v[..., j] - rest)[..., sel], axis=-1)

            own_gap, other_gap = gap(value, own), gap(value, other)
            boot_pref = gap(boot, own) - gap(boot, other)
            lo, hi = percentile_ci(boot_pref[:, None], n=sc.level.gamut.shape[1])
            own_score = _nanmean(value[own, j], axis=0)
            rows.append(
                {
                    "setting": setting.value,
                    "judge": name,
                    "family": family,
                    "n_own": int(own.sum()),
                    "n_other": int(other.sum()),
                    "own_score": float(own_score),
                    "others_score_of_own": float(own_score - own_gap),
                    "own_minus_others": float(own_gap),
                    "other_families_diff": float(other_gap),
                    "self_preference": float(own_gap - other_gap),
                    "self_preference_lo": float(lo[0]),
                    "self_preference_hi": float(hi[0]),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "setting",
            "judge",
            "family",
            "n_own",
            "n_other",
            "own_score",
            "others_score_of_own",
            "own_minus_others",
            "other_families_diff",
            "self_preference",
            "self_preference_lo",
            "self_preference_hi",
        ],
    )


def subset_confusions(
    va: npt.NDArray[np.integer[Any]], vb: npt.NDArray[np.integer[Any]], key: Ints, n_keys: int
) -> npt.NDArray[np.int64]:
    """One confusion table per check subset, ``[n_keys, verdicts, verdicts]``, from one
    ``np.bincount`` over the cells (submission, check) where both judges gave a verdict.

    Args:
        va: ``[S, K]`` verdict codes of the first judge, negative where none.
        vb: the second judge's, same shape and rows.
        key: ``[K]`` the subset of each check (column), in ``range(n_keys)``.
        n_keys: number of subsets.
    """
    shared = (va >= 0) & (vb >= 0)
    cell = (key[None, :] * N_VERDICTS + va) * N_VERDICTS + vb  # int64, as key is: no overflow
    confusion = np.bincount(cell[shared], minlength=n_keys * N_VERDICTS**2)
    return confusion.reshape(n_keys, N_VERDICTS, N_VERDICTS)


def subset_kappas(
    confusions: npt.NDArray[np.int64], min_checks: int = 1
) -> list[tuple[float, float, int]]:
    """Cohen's kappa, raw agreement and the number of cells both judges judged, per confusion
    table of :func:`subset_confusions`; a subset with fewer than ``min_checks`` shared cells
    gets NaN kappa."""
    out = []
    for table in confusions:
        kappa, agreement, n = cohen_kappa(table)
        out.append((kappa if n >= min_checks else float("nan"), agreement, n))
    return out


#: (setting, judge a, judge b) -> the pair's confusion table per check kind key.
KindConfusions = dict[tuple[int, int, int], npt.NDArray[np.int64]]


def kind_confusions(sc: Scores) -> KindConfusions:
    """Per setting and pair of judges, the confusion table of each check kind key (summed, the
    table over every check): what both kappa tables read."""
    key = sc.inputs.checks.kind_key
    return {
        (k, a, b): subset_confusions(*_pair_verdicts(sc, k, a, b), key, N_KIND_KEYS)
        for k in range(len(SETTINGS))
        for a, b in combinations(range(len(sc.inputs.judges)), 2)
    }


def _pair_verdicts(
    sc: Scores, setting: int, a: int, b: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """The ``[S, K]`` verdict codes of judges ``a`` and ``b`` in a setting."""
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    s = np.arange(n_s, dtype=np.int64)
    v = sc.inputs.verdicts
    return v[Groups.index(s, setting, a, n_j)], v[Groups.index(s, setting, b, n_j)]


def judge_kappa(sc: Scores, confusions: KindConfusions | None = None) -> pd.DataFrame:
    """Per setting and pair of judges: Cohen's kappa over every check both judged.

    ``confusions``: :func:`kind_confusions` of ``sc``, when already computed.
    """
    confusions = kind_confusions(sc) if confusions is None else confusions
    rows: list[dict[str, Any]] = []
    for (k, a, b), per_kind in confusions.items():
        [(kappa, agreement, n)] = subset_kappas(per_kind.sum(axis=0, keepdims=True))
        rows.append(
            {
                "setting": SETTINGS[k].value,
                "judge_a": sc.inputs.judges[a],
                "judge_b": sc.inputs.judges[b],
                "kappa": kappa,
                "n_checks": n,
                "agreement": agreement,
            }
        )
    return pd.DataFrame(
        rows, columns=["setting", "judge_a", "judge_b", "kappa", "n_checks", "agreement"]
    )


def judge_kappa_by_kind(sc: Scores, confusions: KindConfusions | None = None) -> pd.DataFrame:
    """Per setting, pair of judges, check kind and secondary flag: Cohen's kappa over the checks
    of that kind both judged, to show where the judges disagree.

    The split is that of ``by_kind``, so the two tables join on (setting, kind, secondary): a
    kind's verdict mix there explains its kappa here, and the secondary flag keeps apart checks
    of one kind that ask different things (a strict list's members from a flexible list's extra
    members, required steps and their order from optional steps and the full order). A kind that
    no question has gets no row; one with fewer than :data:`MIN_KIND_CHECKS` shared checks gets
    NaN kappa.
    """
    confusions = kind_confusions(sc) if confusions is None else confusions
    present = np.flatnonzero(np.bincount(sc.inputs.checks.kind_key, minlength=N_KIND_KEYS))
    labels = [kind_of(int(p)) for p in present]
    rows: list[dict[str, Any]] = []
    for (k, a, b), per_kind in confusions.items():
        stats = subset_kappas(per_kind, MIN_KIND_CHECKS)
        for p, (kind, secondary) in zip(present, labels, strict=True):
            kappa, agreement, n = stats[int(p)]
            rows.append(
                {
                    "setting": SETTINGS[k].value,
                    "judge_a": sc.inputs.judges[a],
                    "judge_b": sc.inputs.judges[b],
                    "kind": kind.value,
                    "secondary": secondary,
                    "kappa": kappa,
                    "n_checks": n,
                    "agreement": agreement,
                }
            )
    keys = ["setting", "judge_a", "judge_b", "kind", "secondary"]
    df = pd.DataFrame(rows, columns=[*keys, "kappa", "n_checks", "agreement"])
    return df.astype(
        {"secondary": np.bool_, "kappa": np.float64, "n_checks": np.int64, "agreement": np.float64}
    )
