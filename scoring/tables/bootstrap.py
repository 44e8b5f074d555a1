"""Bootstrap over questions: confidence intervals, rank ranges and tie groups. A resample is a
row of question multiplicities in ``W[B, Q]``, which every statistic reuses, so both sides of a
paired quantity see the same resamples.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
LEVEL = 95.0
_TAILS = ((100.0 - LEVEL) / 2, 100.0 - (100.0 - LEVEL) / 2)


def resample_weights(n_questions: int, n_resamples: int, seed: int) -> Array:
    """Multiplicity of each question in each bootstrap resample, ``[B, Q]``, fixed by ``seed``."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_questions, size=(n_resamples, n_questions), dtype=np.int64)
    draws += np.arange(n_resamples, dtype=np.int64)[:, None] * n_questions  # a cell per row
    counts = np.bincount(draws.ravel(), minlength=n_resamples * n_questions)
    del draws
    return counts.reshape(n_resamples, n_questions).astype(np.float64)


def weighted_means(
    weights: Array, values: Array, subset: npt.NDArray[np.int64] | None = None
) -> Array:
    """``[B, N]`` means of each row of ``values`` ``[N, Q]`` under each row of question
    ``weights`` ``[B, Q]`` (over the questions of ``subset`` only, if given), NaN entries left
    out; NaN where a row has no weight on a defined value."""
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


def nan_percentiles(
    x: Array, qs: Sequence[float | Array], *, overwrite: bool = False
) -> list[Array]:
    """``np.nanpercentile(x, q, axis=0)`` for each ``q`` (linear interpolation), where a ``q``
    may be an array with one percentile per column; ``overwrite``: sort ``x`` itself (an array
    nothing else reads) instead of a copy."""
    n = (~np.isnan(x)).sum(axis=0)
    s = x if overwrite else x.copy()
    s.sort(axis=0)  # NaN sorts last
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
    """Point estimates with percentile CIs, the resampled values behind them, and the number of
    questions behind each."""

    value: Array
    lo: Array
    hi: Array
    boot: Array
    n: Ints

    def take(self, idx: npt.NDArray[np.int64]) -> Estimate:
        """The estimates of the rows ``idx`` only."""
        return Estimate(self.value[idx], self.lo[idx], self.hi[idx], self.boot[:, idx], self.n[idx])


def expanded_tails(n: int | Ints) -> tuple[Array, Array]:
    """The tails of a 95% expanded percentile interval over ``n`` questions (Hesterberg, "What
    teachers should know about the bootstrap", 2015): at the normal probability of
    ``sqrt(n / (n - 1)) t_{n-1}(0.975)``, wider than 2.5-97.5 for small ``n`` (2.05-97.95 at 42
    questions, 0.4-99.6 at 5); fewer than 2 questions keep the plain tails."""
    from scipy.special import ndtr, stdtrit  # imported when scoring, not with the command line

    size = np.asarray(n, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(size / (size - 1)) * stdtrit(size - 1, 1 - (100.0 - LEVEL) / 200)
        lower = np.where(size >= 2, 100.0 * ndtr(-z), _TAILS[0])
    return np.asarray(lower, np.float64), np.asarray(100.0 - lower, np.float64)


def coverage_ceiling(n: int) -> float:
    """The most a bootstrap percentile interval over ``n`` questions can cover a mean whose
    question scores are symmetric about it, as a fraction: the interval never leaves the range
    of the n scores, and that range misses the centre when all n fall on one side, with
    probability 2^(1 - n) (0.875 at 4 questions, 0.9375 at 5, above 0.97 from 7 on)."""
    return 1.0 - 2.0 ** (1 - n) if n >= 1 else 0.0


def percentile_ci(
    boot: Array, *, overwrite: bool = False, n: int | Ints | None = None
) -> tuple[Array, Array]:
    """The 95% percentile interval over the first axis (NaN resamples left out): the 2.5 and 97.5
    percentiles, or with ``n`` (the questions behind each column) the expanded ones of
    :func:`expanded_tails`. ``overwrite``: ``boot`` may be sorted in place."""
    lo, hi = nan_percentiles(boot, _TAILS if n is None else expanded_tails(n), overwrite=overwrite)
    return lo, hi


def estimate(
    weights: Array, values: Array, subset: npt.NDArray[np.int64] | None = None, scale: float = 1.0
) -> Estimate:
    """Mean over questions of each row of ``values`` (or of the questions in ``subset``) with its
    expanded percentile bootstrap CI, times ``scale``."""
    ones = np.ones((1, values.shape[1]))
    value = weighted_means(ones, values, subset)[0] * scale
    boot = weighted_means(weights, values, subset) * scale
    kept = values if subset is None else values[:, subset]
    n = (~np.isnan(kept)).sum(axis=1).astype(np.int64)
    lo, hi = percentile_ci(boot, n=n)
    return Estimate(value, lo, hi, boot, n)


def paired(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` with the CI from the same resamples on both sides."""
    boot = a.boot - b.boot
    n = np.minimum(a.n, b.n)
    lo, hi = percentile_ci(boot, n=n)
    return Estimate(a.value - b.value, lo, hi, boot, n)


#: Significance level of the pairwise tests behind the compare matrix and the tie groups.
ALPHA = 0.05


class Ask(NamedTuple):
    """One ranking asked of :func:`rank_many`: ``[n]`` estimates, ``[B, n]`` resampled ones,
    the questions behind them (the t test's degrees of freedom + 1; 0: the normal limit), and a
    family key (rankings with the same key are one family for Holm's adjustment; None: alone)."""

    value: Array
    boot: Array
    n_questions: int
    family: Hashable | None = None


@dataclass(frozen=True)
class Ranking:
    """Ranks of n models (1 = best), their bootstrap range, tie groups (1 + the number of models
    significantly better) and the pairs' Holm-adjusted p-values (1 on the diagonal)."""

    rank: npt.NDArray[np.int64]
    rank_lo: npt.NDArray[np.int64]
    rank_hi: npt.NDArray[np.int64]
    tie_group: npt.NDArray[np.int64]
    p_adjusted: Array


def _min_ranks(scores: Array) -> npt.NDArray[np.int64]:
    """1 + the number of strictly better scores, along the last axis."""
    better = scores[..., None, :] > scores[..., :, None]
    return np.asarray(better.sum(axis=-1) + 1, np.int64)


def pair_pvalues(value: Array, boot: Array, n_questions: int) -> Array:
    """Two-sided p-values ``[n, n]`` of every paired difference over its bootstrap standard
    error, on Student's t with ``n_questions - 1`` degrees of freedom (resamples with a NaN left
    out); a difference with no spread is certain: p = 0 unless it is zero."""
    from scipy.special import stdtr  # imported when scoring, not with the command line

    n = value.size
    if n == 0:
        return np.ones((0, 0))
    ok = boot[~np.isnan(boot).any(axis=1)]
    diff = value[:, None] - value[None, :]
    if ok.shape[0] < 2:
        return np.ones((n, n))
    cov = np.atleast_2d(np.cov(ok, rowvar=False))
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2.0 * cov
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(diff) / se
    df = float(n_questions - 1) if n_questions > 1 else np.inf
    p = 2.0 * stdtr(df, -t)
    p = np.where(se > 0, p, np.where(diff != 0, 0.0, 1.0))
    np.fill_diagonal(p, 1.0)
    return np.asarray(p, np.float64)


def holm(pvalues: Array) -> Array:
    """Holm's step-down adjustment of a family of p-values (any shape, NaN-free)."""
    flat = pvalues.ravel()
    m = flat.size
    order = np.argsort(flat, kind="stable")
    steps = np.minimum(1.0, (m - np.arange(m)) * flat[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(steps) if m else steps
    return out.reshape(pvalues.shape)


def adjusted_pvalues(asks: Sequence[Ask]) -> list[Array]:
    """Per ranking, the ``[n, n]`` Holm-adjusted p-values, each family adjusted over all of its
    rankings' pairs (each unordered pair once)."""
    raw = [pair_pvalues(a.value, a.boot, a.n_questions) for a in asks]
    out = [np.ones_like(p) for p in raw]
    families: dict[Hashable, list[int]] = {}
    for i, a in enumerate(asks):
        families.setdefault(("own", i) if a.family is None else ("family", a.family), []).append(i)
    for members in families.values():
        upper = [np.triu_indices(raw[i].shape[0], 1) for i in members]
        pooled = np.concatenate([raw[i][u] for i, u in zip(members, upper, strict=True)])
        adjusted = np.split(holm(pooled), np.cumsum([u[0].size for u in upper])[:-1])
        for i, u, adj in zip(members, upper, adjusted, strict=True):
            out[i][u] = adj
            out[i].T[u] = adj
    return out


def significance_ranks(value: Array, p_adjusted: Array, alpha: float = ALPHA) -> Ints:
    """1 + the number of models significantly better (higher, adjusted p below ``alpha``):
    transitive when one threshold on |difference| / standard error decides, as Holm's adjustment
    over one family gives, so models with the same value are never significantly different."""
    better = (value[None, :] > value[:, None]) & (p_adjusted < alpha)
    return np.asarray(better.sum(axis=1) + 1, np.int64)


def rank_many(rankings: Sequence[Ask]) -> list[Ranking]:
    """Rank the models of each :class:`Ask` (higher is better; equal scores share the best rank),
    with each rank's 2.5-97.5 percentile over the resamples and tie groups: 1 + the number of
    models significantly better (paired t test on the bootstrap standard error, Holm-adjusted
    over each family). The resampled ranks share one array, sorted in place."""
    if not rankings:
        return []
    sizes = [a.value.size for a in rankings]
    n_boot = rankings[0].boot.shape[0]
    every = np.empty((n_boot, sum(sizes)))  # the resampled ranks, ranking after ranking
    start = 0
    for a, n in zip(rankings, sizes, strict=True):
        every[:, start : start + n] = _min_ranks(a.boot)
        start += n
    if every.size:  # both tails from one partition of the array, which nothing else reads
        lo_all, hi_all = np.percentile(
            every, _TAILS, axis=0, method="inverted_cdf", overwrite_input=True
        )
    else:
        lo_all = hi_all = np.zeros(every.shape[1])
    del every
    cut = np.cumsum(sizes)[:-1]
    out = []
    for a, lo, hi, p in zip(
        rankings,
        np.split(lo_all, cut),
        np.split(hi_all, cut),
        adjusted_pvalues(rankings),
        strict=True,
    ):
        rank = _min_ranks(a.value)
        group = significance_ranks(a.value, p)
        out.append(Ranking(rank, lo.astype(np.int64), hi.astype(np.int64), group, p))
    return out
