"""Bootstrap over questions: confidence intervals, rank ranges and tie groups. Pure arithmetic.

One resample is a multiset of question indices, held as a row of multiplicities in a weight matrix
``W[B, Q]``. Every statistic reuses the same ``W``, so the two sides of a paired quantity (a
modality gap, a judge offset, the difference between neighbours) always see the same resamples,
and a mean over any subset of questions is a matrix product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
LEVEL = 95.0
_TAILS = ((100.0 - LEVEL) / 2, 100.0 - (100.0 - LEVEL) / 2)


def resample_weights(n_questions: int, n_resamples: int, seed: int) -> Array:
    """Multiplicity of each question in each bootstrap resample, ``[B, Q]``, from ``seed``.

    The same (n_questions, n_resamples, seed) always give the same matrix.
    """
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_questions, size=(n_resamples, n_questions), dtype=np.int64)
    draws += np.arange(n_resamples, dtype=np.int64)[:, None] * n_questions  # a cell per row
    counts = np.bincount(draws.ravel(), minlength=n_resamples * n_questions)
    del draws
    return counts.reshape(n_resamples, n_questions).astype(np.float64)


def weighted_means(
    weights: Array, values: Array, subset: npt.NDArray[np.int64] | None = None
) -> Array:
    """Weighted means over questions of each row of ``values``, NaN entries left out.

    Args:
        weights: ``[B, Q]`` question weights (a row of ones gives the plain mean).
        values: ``[N, Q]`` per-question values; NaN means "not defined for this question".
        subset: optional question indices to average over (the others are ignored).

    Returns:
        ``[B, N]`` means; NaN where a row has no weight on a defined value.
    """
    if subset is not None:
        weights, values = weights[:, subset], values[:, subset]
    out = np.full((weights.shape[0], values.shape[0]), np.nan)
    defined = ~np.isnan(values)
    rows = np.flatnonzero(defined.any(axis=1))  # all-NaN rows (incomplete groups) stay NaN
    if rows.size == 0:
        return out
    defined = defined[rows]
    num = weights @ np.where(defined, values[rows], 0.0).T
    if (defined == defined[:1]).all():  # the usual case: one pattern, one denominator
        den = (weights @ defined[0].astype(np.float64))[:, None]
    else:
        den = weights @ defined.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[:, rows] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def nan_percentiles(x: Array, qs: tuple[float, ...], *, overwrite: bool = False) -> list[Array]:
    """Percentiles (linear interpolation) over the first axis, NaN entries left out; NaN for a
    column with no finite entry. Vectorised equivalent of ``np.nanpercentile(x, q, axis=0)``.

    ``overwrite``: sort ``x`` itself (an array nothing else reads) instead of a copy.
    """
    n = (~np.isnan(x)).sum(axis=0)
    if overwrite:
        x.sort(axis=0)  # NaN sorts last
        s = x
    else:
        s = np.sort(x, axis=0)
    out = []
    for q in qs:
        pos = np.maximum(n - 1, 0) * (q / 100.0)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
        a = np.take_along_axis(s, lo[None, :], axis=0)[0]
        b = np.take_along_axis(s, hi[None, :], axis=0)[0]
        frac = pos - lo
        with np.errstate(invalid="ignore"):
            v = np.where(frac > 0, a + (b - a) * frac, a)
        out.append(np.where(n > 0, v, np.nan))
    return out


@dataclass(frozen=True)
class Estimate:
    """Point estimates with percentile CIs, and the resampled values behind them."""

    value: Array
    lo: Array
    hi: Array
    boot: Array

    def take(self, idx: npt.NDArray[np.int64]) -> Estimate:
        """The estimates of the rows ``idx`` only."""
        return Estimate(self.value[idx], self.lo[idx], self.hi[idx], self.boot[:, idx])


def percentile_ci(boot: Array, *, overwrite: bool = False) -> tuple[Array, Array]:
    """The 2.5 and 97.5 percentiles over the first axis (NaN resamples left out).

    ``overwrite``: ``boot`` is a temporary that may be sorted in place.
    """
    lo, hi = nan_percentiles(boot, _TAILS, overwrite=overwrite)
    return lo, hi


def estimate(
    weights: Array, values: Array, subset: npt.NDArray[np.int64] | None = None, scale: float = 1.0
) -> Estimate:
    """Mean over questions of each row of ``values`` (or of the questions in ``subset``) with its
    bootstrap CI, times ``scale``."""
    ones = np.ones((1, values.shape[1]))
    value = weighted_means(ones, values, subset)[0] * scale
    boot = weighted_means(weights, values, subset) * scale
    lo, hi = percentile_ci(boot)
    return Estimate(value, lo, hi, boot)


def paired(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` with the CI from the same resamples on both sides."""
    boot = a.boot - b.boot
    lo, hi = percentile_ci(boot)
    return Estimate(a.value - b.value, lo, hi, boot)


@dataclass(frozen=True)
class Ranking:
    """Ranks of n models (1 = best), their bootstrap range, and tie groups (1 = top group)."""

    rank: npt.NDArray[np.int64]
    rank_lo: npt.NDArray[np.int64]
    rank_hi: npt.NDArray[np.int64]
    tie_group: npt.NDArray[np.int64]


def _min_ranks(scores: Array) -> npt.NDArray[np.int64]:
    """1 + the number of strictly better scores, along the last axis."""
    better = scores[..., None, :] > scores[..., :, None]
    return np.asarray(better.sum(axis=-1) + 1, np.int64)


def rank_models(value: Array, boot: Array, tiebreak: list[str] | None = None) -> Ranking:
    """Rank models by score (higher is better) with bootstrap rank ranges and tie groups.

    Equal scores share the best rank. The rank range is the 2.5-97.5 percentile of the rank in each
    resample. Models are ordered by score (then by ``tiebreak``); two neighbours whose paired
    bootstrap difference has a 95% CI containing 0 share a tie group, so groups chain.

    Args:
        value: ``[n]`` point estimates.
        boot: ``[B, n]`` resampled estimates (same resamples for every model).
        tiebreak: optional names fixing the order of equal scores.
    """
    return rank_many([(value, boot, tiebreak)])[0]


def rank_many(rankings: Sequence[tuple[Array, Array, Sequence[str] | None]]) -> list[Ranking]:
    """:func:`rank_models` of each ``(value, boot, tiebreak)``, with the percentiles of all of
    them taken in one pass (each is still over its own columns, so the results are the same).

    The resampled ranks of every ranking share one array, and so do the neighbours' paired
    differences, each sorted in place and let go before the next is made.
    """
    if not rankings:
        return []
    sizes = [value.size for value, _, _ in rankings]
    n_boot = rankings[0][1].shape[0]
    ranks, orders = [], []
    every = np.empty((n_boot, sum(sizes)))  # the resampled ranks, ranking after ranking
    start = 0
    for value, boot, tiebreak in rankings:
        n = value.size
        ranks.append(_min_ranks(value))
        every[:, start : start + n] = _min_ranks(boot)
        start += n
        keys = tiebreak if tiebreak is not None else [f"{i:09d}" for i in range(n)]
        orders.append(sorted(range(n), key=lambda i: (-value[i], keys[i])))
    cut = np.cumsum(sizes)[:-1]
    if every.size:  # both tails from one partition of the array, which nothing else reads
        lo_all, hi_all = np.percentile(
            every, _TAILS, axis=0, method="inverted_cdf", overwrite_input=True
        )
    else:
        lo_all = hi_all = np.zeros(every.shape[1])
    del every
    # every neighbour pair's paired difference: a new group starts after each pair whose 95% CI
    # excludes 0
    pairs = [max(n - 1, 0) for n in sizes]
    diffs = np.empty((n_boot, sum(pairs)))
    start = 0
    for (_, boot, _), order, n in zip(rankings, orders, pairs, strict=True):
        diffs[:, start : start + n] = boot[:, order[:-1]] - boot[:, order[1:]]
        start += n
    d_lo, d_hi = percentile_ci(diffs, overwrite=True)
    del diffs
    pair_cut = np.cumsum(pairs)[:-1]
    out = []
    for rank, order, lo, hi, pair_lo, pair_hi in zip(
        ranks,
        orders,
        np.split(lo_all, cut),
        np.split(hi_all, cut),
        np.split(d_lo, pair_cut),
        np.split(d_hi, pair_cut),
        strict=True,
    ):
        group = np.zeros(rank.size, np.int64)
        if order:
            separated = ~((pair_lo <= 0.0) & (pair_hi >= 0.0))
            group[order] = 1 + np.concatenate([[0], np.cumsum(separated)])
        out.append(Ranking(rank, lo.astype(np.int64), hi.astype(np.int64), group))
    return out
