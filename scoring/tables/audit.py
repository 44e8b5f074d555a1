"""Judge against humans, humans against each other, and the PPI-corrected score (docs/contract.md
§11). Pure arithmetic on the verdict matrix and the final human verdicts, no I/O.

The corrected score of a (submission, setting, judge) follows prediction-powered inference: with
``S_j(q)`` the question score under the judge's verdicts for all N questions and ``S_h(q)`` the
score under the human verdicts for the n audited ones (every check that has a judge verdict has a
final human verdict), ``theta`` is the mean of ``S_j`` over all N plus the design-weighted mean of
``S_h - S_j`` over the audited, each weighing the inverse of its probability of being drawn in
the audit's stratified draw (the response's domain is its stratum); the interval is that of a
two-phase stratified sample of questions (:func:`ppi_mean`), for the mean over the population of
questions, empty when n < 2. Its ranks come from the leaderboard's bootstrap resamples applied to
both terms. Questions with some human verdicts but not all are named (:func:`incomplete_audits`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.audit import NO_VERDICT, AuditLabels
from scoring.check_table import KIND_ORDER
from scoring.scorer import ScoringConfig, gamut_scores, tier_scores
from scoring.tables.bootstrap import Ask, rank_many, weighted_means
from scoring.tables.checks import CheckIndex
from scoring.tables.columns import MIN_KIND_CHECKS, TABLES
from scoring.tables.core import N_TIERS, N_VERDICTS, Status, count_verdicts
from scoring.tables.judges import agreement_intervals, confusion_figures, with_total
from scoring.tables.matrix import SETTINGS

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
#: z of a two-sided 95% normal interval.
Z95 = 1.96
#: The verdicts' short names in the confusion columns, in code order.
VERDICT_NAMES = ("meets", "partial", "missing", "contradicts")
#: The 16 confusion columns, judge verdict first: ``judge_meets_human_partial`` counts checks the
#: judge called meets and the humans partially_meets.
CONFUSION_COLUMNS = tuple(f"judge_{j}_human_{h}" for j in VERDICT_NAMES for h in VERDICT_NAMES)
#: The human-human confusion columns: first annotator (lower id) then second.
PAIR_COLUMNS = tuple(f"first_{a}_second_{b}" for a in VERDICT_NAMES for b in VERDICT_NAMES)
PPI_COLUMNS = (
    "gamut_ppi",
    "gamut_ppi_lo",
    "gamut_ppi_hi",
    "audited_questions",
    "rank_ppi",
    "tie_group_ppi",
)
ALL_KINDS = "all"


@dataclass(frozen=True)
class PPIEstimate:
    """A corrected mean and its 95% interval (all in the question scores' scale, not x100)."""

    theta: float
    lo: float
    hi: float
    n_audited: int


def ppi_mean(
    judge: Floats,
    human: Floats,
    audited: npt.NDArray[np.bool_],
    strata: Ints | None = None,
) -> PPIEstimate:
    """The prediction-powered mean of one (submission, setting, judge), design-consistent for a
    stratified draw of questions (docs/contract.md §11).

    With N_h questions and n_h audited ones in stratum h, W_h = N_h / N and d = human - judge,
    each audited question weighs W_h / n_h (:func:`design_weights`: the inverse of its
    probability of being drawn, over N)::

        theta = mean_all(judge) + sum_h W_h mean_h(d)
        var   = s2_h / N + sum_h W_h^2 (1 - n_h / N_h) s2_d,h / n_h

    the variance of a two-phase sample for stratification (Cochran 1977, eq. 12.4): the N
    questions drawn from the population, the audited drawn from them by stratum. ``s2_h``, the
    population variance of the human score, is var_all(judge) + var_w(d) + 2 cov_w(judge, d)
    (weighted over the audited): the audited questions are part of the N. ``s2_d,h`` is the
    sample variance of d in stratum h; a stratum with one audited question takes the pooled
    within-stratum variance. A stratum with none shares its weight out among the others in
    proportion (its correction taken as theirs). The question is the unit (every check of an
    audited question is labelled), so the variance is clustered by question. The interval is
    theta +/- 1.96 sqrt(var), for the mean over the population of questions.

    Args:
        judge: ``[N]`` question scores under the judge's verdicts, every question.
        human: ``[N]`` question scores under the human verdicts (read only where ``audited``).
        audited: ``[N]`` whether each question is audited.
        strata: ``[N]`` the draw's stratum of each question (None: one stratum).

    Returns:
        All NaN when fewer than 2 questions are audited.
    """
    n, size = int(audited.sum()), judge.size
    if n < 2 or size < 2:
        return PPIEstimate(float("nan"), float("nan"), float("nan"), n)
    strata = np.zeros(size, np.int64) if strata is None else strata
    _, code = np.unique(strata, return_inverse=True)
    big_n = np.bincount(code).astype(np.float64)
    small_n = np.bincount(code[audited], minlength=big_n.size).astype(np.float64)
    share = np.where(small_n > 0, big_n, 0.0) / big_n[small_n > 0].sum()  # W_h
    h, d, j = code[audited], human[audited] - judge[audited], judge[audited]
    w = design_weights(audited, strata)
    correction = float((w * d).sum())
    resid = d - (np.bincount(h, d, big_n.size) / np.maximum(small_n, 1))[h]
    within = np.bincount(h, resid**2, big_n.size) / np.maximum(small_n - 1, 1)
    several = small_n >= 2
    pooled = (resid**2).sum() / (small_n[several] - 1).sum() if several.any() else d.var(ddof=1)
    within = np.where(several, within, pooled)
    covered = small_n > 0
    phase2 = float(
        (share**2 * (1 - small_n / big_n) * within / np.maximum(small_n, 1))[covered].sum()
    )
    scale = n / (n - 1)
    var_d = float((w * (d - correction) ** 2).sum() * scale)
    cov = float((w * (d - correction) * (j - (w * j).sum())).sum() * scale)
    s2_h = max(float(judge.var(ddof=1)) + var_d + 2.0 * cov, 0.0)
    theta = float(judge.mean()) + correction
    half = Z95 * float(np.sqrt(s2_h / size + phase2))
    return PPIEstimate(theta, theta - half, theta + half, n)


@dataclass(frozen=True)
class HumanScores:
    """Question scores under the final human verdicts, per response.

    Attributes:
        final: ``[R, K]`` final human verdict codes (:data:`NO_VERDICT` where none).
        gamut: ``[R, Q]`` question scores in [-1, 1] where the question is audited, else NaN.
        audited: ``[R, Q]`` whether every check of the question has a final human verdict.
    """

    final: npt.NDArray[np.int8]
    gamut: Floats
    audited: npt.NDArray[np.bool_]


def human_scores(
    final: npt.NDArray[np.int8],
    question: Ints,
    tier: Ints,
    n_questions: int,
    config: ScoringConfig,
) -> HumanScores:
    """Score every audited question of every response under the human verdicts.

    Args:
        final: ``[R, K]`` final human verdicts.
        question: ``[K]`` each check's question index.
        tier: ``[K]`` each check's tier index.
        n_questions: Q.
        config: the scoring parameters.
    """
    key = question * N_TIERS + tier
    counts = count_verdicts(final, key, n_questions * N_TIERS)
    counts = counts.reshape(final.shape[0], n_questions, N_TIERS, N_VERDICTS)
    present = np.bincount(key, minlength=n_questions * N_TIERS).reshape(n_questions, N_TIERS) > 0
    per_q = np.bincount(question, minlength=n_questions)
    labelled = counts.sum(axis=(2, 3))
    audited = (labelled == per_q[None, :]) & (per_q[None, :] > 0)
    tiers = tier_scores(counts, config)
    tiers[:, ~present] = np.nan
    gamut = gamut_scores(tiers, config)
    gamut[~audited] = np.nan
    return HumanScores(final, gamut, audited)


def ppi_columns(
    judge_gamut: Floats,
    complete: npt.NDArray[np.bool_],
    response_of: Ints,
    humans: HumanScores,
    weights: Floats,
    rankings: list[tuple[Ints, list[str]]],
    strata: Ints,
    judge_boot: Floats | None = None,
) -> dict[str, Floats]:
    """The leaderboard's PPI columns for every group.

    Args:
        judge_gamut: ``[G, Q]`` question scores under each group's judge (NaN when incomplete).
        complete: ``[G]`` whether each group is complete.
        response_of: ``[G]`` each group's response (``submission * 2 + setting``).
        humans: from :func:`human_scores`.
        weights: ``[B, Q]`` the leaderboard's bootstrap weights (for ranks and tie groups).
        rankings: per (setting, judge), the groups ranked together and their submission ids.
        strata: ``[Q]`` the audit draw's stratum of each question within a response (its domain).
        judge_boot: ``[B, G]`` the leaderboard's resampled Gamut scores (x100) of every group,
            if already computed (else computed here from ``weights``).

    Returns:
        column -> ``[G]`` values (:data:`PPI_COLUMNS`); NaN where not defined (the count is 0
        for an incomplete group).
    """
    n_g = judge_gamut.shape[0]
    out = {name: np.full(n_g, np.nan) for name in PPI_COLUMNS}
    out["audited_questions"] = np.zeros(n_g)
    rect = np.full(judge_gamut.shape, np.nan)  # design-weighted corrections, for the ranks
    for g in np.flatnonzero(complete):
        r = int(response_of[g])
        audited = humans.audited[r]
        est = ppi_mean(judge_gamut[g], humans.gamut[r], audited, strata)
        out["audited_questions"][g] = est.n_audited
        out["gamut_ppi"][g] = 100.0 * est.theta
        out["gamut_ppi_lo"][g] = 100.0 * est.lo
        out["gamut_ppi_hi"][g] = 100.0 * est.hi
        if not np.isnan(est.theta):
            w = design_weights(audited, strata) * audited.sum()  # mean 1 over the audited
            rect[g, audited] = w * (humans.gamut[r, audited] - judge_gamut[g, audited])
    corrected = np.flatnonzero(~np.isnan(out["gamut_ppi"]))
    if corrected.size == 0:
        return out
    # the resampled corrections of every corrected group at once: [B, corrected]
    boot = np.full((weights.shape[0], n_g), np.nan)
    base = judge_boot[:, corrected] if judge_boot is not None else None
    if base is None:
        base = weighted_means(weights, judge_gamut[corrected]) * 100.0
    boot[:, corrected] = base + _rect_sums(weights, rect, corrected, response_of) * 100.0
    asked, where = [], []
    for idx, names in rankings:
        ok = ~np.isnan(out["gamut_ppi"][idx])
        rows = idx[ok]
        if rows.size == 0:
            continue
        # a resample that draws fewer than two audited questions has no correction (NaN)
        kept = [n for n, k in zip(names, ok, strict=True) if k]
        asked.append(Ask(out["gamut_ppi"][rows], boot[:, rows], kept, judge_gamut.shape[1]))
        where.append(rows)
    for rows, ranking in zip(where, rank_many(asked), strict=True):
        out["rank_ppi"][rows] = ranking.rank
        out["tie_group_ppi"][rows] = ranking.tie_group
    return out


def question_strata(questions: Sequence[Any]) -> Ints:
    """``[Q]`` each question's stratum in the audit draw within one response: its domain
    (:func:`scoring.audit_sample.draw_sample` stratifies by submission, setting and domain)."""
    _, code = np.unique([str(q.domain) for q in questions], return_inverse=True)
    return np.asarray(code, np.int64)


def design_weights(audited: npt.NDArray[np.bool_], strata: Ints) -> Floats:
    """Each audited question's weight W_h / n_h, summing to 1: the inverse of its probability of
    being drawn in its stratum (n_h of N_h), over N. A stratum with no audited question shares
    its weight out among the others in proportion to their sizes."""
    _, code = np.unique(strata, return_inverse=True)
    big_n = np.bincount(code).astype(np.float64)
    small_n = np.bincount(code[audited], minlength=big_n.size).astype(np.float64)
    share = np.where(small_n > 0, big_n, 0.0) / big_n[small_n > 0].sum()
    return np.asarray((share / np.maximum(small_n, 1))[code[audited]], np.float64)


def _rect_sums(weights: Floats, rect: Floats, groups: Ints, response_of: Ints) -> Floats:
    """``[B, len(groups)]`` resampled design-weighted means of each group's corrections (``rect``
    holds the corrections times their design weights, of mean 1): the weights of a response's
    audited questions are taken once for all its judges (a few percent of the questions), not
    the whole ``[B, Q]`` matrix per group."""
    out = np.full((weights.shape[0], groups.size), np.nan)
    for r in np.unique(response_of[groups]):
        mine = np.flatnonzero(response_of[groups] == r)
        cols = np.flatnonzero(~np.isnan(rect[groups[mine[0]]]))
        w = weights[:, cols]
        den = w.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, mine] = np.where(den > 0, (w @ rect[groups[mine]][:, cols].T) / den, np.nan)
    return out


def incomplete_audits(
    labels: AuditLabels,
    humans: HumanScores,
    question: Ints,
    submission_ids: tuple[str, ...] | list[str],
    question_ids: tuple[str, ...] | list[str],
) -> pd.DataFrame:
    """One row per (response, question) with human labels on some checks but not a final human
    verdict on every one: left out of the correction, and named.

    Args:
        labels: the audit labels.
        humans: from :func:`human_scores`.
        question: ``[K]`` each check's question index.
        submission_ids: the submissions, in index order.
        question_ids: the questions, in index order.
    """
    n_q = len(question_ids)
    started = np.zeros(humans.audited.shape, np.bool_)
    started[labels.response, question[labels.check]] = True
    resp, q = np.nonzero(started & ~humans.audited)
    per_q = np.bincount(question, minlength=n_q)
    final = humans.final != NO_VERDICT
    n_final = np.array(
        [int(final[r, question == qq].sum()) for r, qq in zip(resp, q, strict=True)], np.int64
    )
    return pd.DataFrame(
        {
            "setting": [SETTINGS[int(r) % len(SETTINGS)].value for r in resp],
            "submission_id": [submission_ids[int(r) // len(SETTINGS)] for r in resp],
            "question_id": [question_ids[int(x)] for x in q],
            "n_checks": per_q[q].astype(np.int64),
            "n_final": n_final,
        },
        columns=INCOMPLETE_COLUMNS,
    )


#: Columns of the ``audit_incomplete`` table.
INCOMPLETE_COLUMNS = ["setting", "submission_id", "question_id", "n_checks", "n_final"]


def agreement(confusion: npt.NDArray[np.int64], values: Floats) -> dict[str, float]:
    """Agreement figures of a 4 x 4 confusion table (rows: the rater judged, columns: the
    reference).

    Returns:
        ``n_checks``, ``agreement`` (raw), ``kappa`` (Cohen's), ``kappa_linear`` (linear
        weights), ``macro_f1`` (the mean F1 of the verdicts that occur in either labelling) and
        ``leniency`` (the rows' mean verdict value minus the columns', on the scale ``values``).
    """
    n = int(confusion.sum())
    rows = confusion.sum(axis=1).astype(np.float64)
    cols = confusion.sum(axis=0).astype(np.float64)
    figures = {k: float(v) for k, v in confusion_figures(confusion).items()}
    return {
        "n_checks": float(n),
        **figures,
        "leniency": float((rows @ values - cols @ values) / n) if n else float("nan"),
    }


def verdict_values(config: ScoringConfig) -> Floats:
    """The verdict scale of leniency: meets 1, partially_meets lambda, missing 0, contradicts mu."""
    return np.array([1.0, config.partial_credit, 0.0, config.contradiction_penalty])


def _kind_rows(
    per_question: npt.NDArray[np.int64], weights: Floats, values: Floats, columns: tuple[str, ...]
) -> list[dict[str, object]]:
    """One row per check kind present (and ``all``): agreement figures with their intervals over
    questions, and confusion counts.

    Args:
        per_question: ``[Q, kinds, k, k]`` each question's confusion table per check kind.
        weights: the scores' bootstrap weights, ``[B, Q]``.
        values: the verdict scale of leniency.
        columns: the confusion count columns (none: not given).
    """
    kinds = [k for k in range(per_question.shape[1]) if per_question[:, k].any()]
    names = [ALL_KINDS, *(KIND_ORDER[k].value for k in kinds)]
    floor = np.array([1] + [MIN_KIND_CHECKS] * len(kinds))  # the kinds' kappas have a floor
    stacked = with_total(per_question[:, kinds])
    ci = agreement_intervals(stacked, weights, floor)
    rows: list[dict[str, object]] = []
    for t, (kind, table) in enumerate(zip(names, stacked.sum(axis=0), strict=True)):
        figures = agreement(table, values)
        if kind != ALL_KINDS and figures["n_checks"] < MIN_KIND_CHECKS:  # too few for a kappa
            figures["kappa"] = figures["kappa_linear"] = float("nan")
        bounds = {f"{f}_{e}": float(ci[f][i][t]) for f in ci for i, e in enumerate(("lo", "hi"))}
        row: dict[str, object] = {"kind": kind, **figures, **bounds}
        row["n_checks"] = int(figures["n_checks"])
        if columns:
            row.update(zip(columns, (int(x) for x in table.ravel()), strict=True))
        rows.append(row)
    return rows


def _per_question(code: Ints, n_questions: int) -> npt.NDArray[np.int64]:
    """``[Q, kinds, k, k]`` counts of the cells coded ``((question * kinds + kind) * k + rater)
    * k + reference``."""
    shape = (n_questions, len(KIND_ORDER), N_VERDICTS, N_VERDICTS)
    return np.bincount(code, minlength=int(np.prod(shape))).reshape(shape)


def _code(question: Ints, kind: Ints, rater: Ints, reference: Ints) -> Ints:
    """The cell code of :func:`_per_question`."""
    return ((question * len(KIND_ORDER) + kind) * N_VERDICTS + rater) * N_VERDICTS + reference


def judge_human(
    verdicts: npt.NDArray[np.int8],
    status: npt.NDArray[np.int8],
    response_of: Ints,
    judge_of: Ints,
    judges: tuple[str, ...],
    final: npt.NDArray[np.int8],
    checks: CheckIndex,
    weights: Floats,
    config: ScoringConfig,
) -> pd.DataFrame:
    """Per setting, judge and check kind (and ``all``): the judge against the final human verdicts
    on every (response, check) that has both, with intervals over questions (``weights``: the
    scores' bootstrap weights)."""
    values, n_q = verdict_values(config), int(weights.shape[1])
    rows: list[dict[str, object]] = []
    # each response's labelled checks, once (a few percent of the checks)
    cols = [np.flatnonzero(final[r] != NO_VERDICT) for r in range(final.shape[0])]
    for k, setting in enumerate(SETTINGS):
        for j, name in enumerate(judges):
            groups = np.flatnonzero(
                (status != Status.ABSENT) & (judge_of == j) & (response_of % len(SETTINGS) == k)
            )
            codes = [np.zeros(0, np.int64)]
            for g in groups:
                r, c = int(response_of[g]), cols[int(response_of[g])]
                v = verdicts[g, c].astype(np.int64)
                c = c[v >= 0]
                codes.append(_code(checks.question[c], checks.kind[c], v[v >= 0], final[r, c]))
            code = np.concatenate(codes)
            if code.size:
                per_q = _per_question(code, n_q)
                for row in _kind_rows(per_q, weights, values, CONFUSION_COLUMNS):
                    rows.append({"setting": setting.value, "judge": name, **row})
    return pd.DataFrame(rows, columns=list(TABLES["judge_human"]))


def judge_annotator(
    verdicts: npt.NDArray[np.int8],
    status: npt.NDArray[np.int8],
    judges: tuple[str, ...],
    labels: AuditLabels,
    checks: CheckIndex,
    weights: Floats,
    config: ScoringConfig,
) -> pd.DataFrame:
    """Per setting, judge and check kind (and ``all``): the judge against each annotator's own
    label (not the adjudicated final verdict), one pair per label line on a check the judge
    judged: like with like beside :func:`human_human`, which pairs annotators the same way.

    Leniency is the judge's mean verdict value minus the annotators'.
    """
    values, n_j, n_q = verdict_values(config), len(judges), int(weights.shape[1])
    label = np.flatnonzero(~labels.adjudication)
    response, check, human = labels.response[label], labels.check[label], labels.verdict[label]
    rows: list[dict[str, object]] = []
    for k, setting in enumerate(SETTINGS):
        for j, name in enumerate(judges):
            mine = response % len(SETTINGS) == k
            group = response[mine] * n_j + j  # the group of (response, judge)
            v = verdicts[group, check[mine]].astype(np.int64)
            ok = (v >= 0) & (status[group] != Status.ABSENT)
            if not ok.any():
                continue
            c = check[mine][ok]
            code = _code(checks.question[c], checks.kind[c], v[ok], human[mine][ok])
            for row in _kind_rows(_per_question(code, n_q), weights, values, ()):
                rows.append({"setting": setting.value, "judge": name, **row})
    return pd.DataFrame(rows, columns=list(TABLES["judge_annotator"]))


def human_human(
    labels: AuditLabels, checks: CheckIndex, weights: Floats, config: ScoringConfig
) -> pd.DataFrame:
    """Per setting and check kind (and ``all``): annotators against each other, over every pair of
    annotators' labels on one (response, check); the ceiling a judge can be held to.

    Leniency here is the first annotator's (lower id) mean value minus the second's.
    """
    values, n_q = verdict_values(config), int(weights.shape[1])
    cell, a, b = labels.annotator_pairs()
    response = cell // max(labels.n_checks, 1)
    check = cell % max(labels.n_checks, 1)
    rows: list[dict[str, object]] = []
    for k, setting in enumerate(SETTINGS):
        mine = response % len(SETTINGS) == k
        if not mine.any():
            continue
        c = check[mine]
        code = _code(checks.question[c], checks.kind[c], a[mine], b[mine])
        for row in _kind_rows(_per_question(code, n_q), weights, values, PAIR_COLUMNS):
            rows.append({"setting": setting.value, **row})
    return pd.DataFrame(rows, columns=list(TABLES["human_human"]))


__all__ = [
    "ALL_KINDS",
    "CONFUSION_COLUMNS",
    "INCOMPLETE_COLUMNS",
    "PAIR_COLUMNS",
    "PPI_COLUMNS",
    "HumanScores",
    "PPIEstimate",
    "agreement",
    "design_weights",
    "human_human",
    "human_scores",
    "incomplete_audits",
    "judge_annotator",
    "judge_human",
    "ppi_columns",
    "ppi_mean",
    "question_strata",
    "verdict_values",
]
