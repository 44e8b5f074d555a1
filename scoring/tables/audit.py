"""Judge against humans, humans against each other, and the PPI-corrected score (docs/contract.md
§11, :func:`ppi_mean`, ranked on the leaderboard's resamples applied to both terms). Pure
arithmetic on the verdict matrix and the final human verdicts, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.audit import NO_VERDICT, AuditLabels
from scoring.check_table import KIND_ORDER
from scoring.scorer import ScoringConfig
from scoring.tables.bootstrap import Ask, rank_many
from scoring.tables.checks import CheckIndex
from scoring.tables.columns import MIN_KIND_CHECKS, PPI_COLUMNS, TABLES
from scoring.tables.core import N_VERDICTS, Status, scored
from scoring.tables.judges import agreement_intervals, confusion_figures, with_total
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Scores

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
#: z of a two-sided 95% normal interval.
Z95 = 1.96
#: The verdicts' short names in the confusion columns, in code order.
_NAMES = ("meets", "partial", "missing", "contradicts")


@dataclass(frozen=True)
class PPIEstimate:
    """A corrected mean and its 95% interval (all in the question scores' scale, not x100)."""

    theta: float
    lo: float
    hi: float
    n_audited: int


def _strata(audited: npt.NDArray[np.bool_], strata: Ints) -> tuple[Ints, Floats, Floats, Floats]:
    """Each question's stratum code, N_h, n_h (audited) and W_h = N_h / N, where a stratum with
    no audited question shares its weight out among the others in proportion to their sizes."""
    _, code = np.unique(strata, return_inverse=True)
    big_n = np.bincount(code).astype(np.float64)
    small_n = np.bincount(code[audited], minlength=big_n.size).astype(np.float64)
    share = np.where(small_n > 0, big_n, 0.0) / big_n[small_n > 0].sum()
    return code, big_n, small_n, share


def design_weights(audited: npt.NDArray[np.bool_], strata: Ints) -> Floats:
    """Each audited question's weight W_h / n_h, summing to 1: the inverse of its probability of
    being drawn in its stratum (n_h of N_h), over N."""
    code, _, small_n, share = _strata(audited, strata)
    return np.asarray((share / np.maximum(small_n, 1))[code[audited]], np.float64)


def ppi_mean(
    judge: Floats, human: Floats, audited: npt.NDArray[np.bool_], strata: Ints | None = None
) -> PPIEstimate:
    """The prediction-powered mean of one group, design-consistent for a stratified draw of
    questions (docs/contract.md §11). With N_h questions and n_h audited in stratum h, W_h = N_h / N
    and d = human - judge::

        theta = mean_all(judge) + sum_h W_h mean_h(d)
        var   = s2_h / N + sum_h W_h^2 (1 - n_h / N_h) s2_d,h / n_h

    the two-phase variance for stratification (Cochran 1977, eq. 12.4), where ``s2_h``, the human
    score's population variance, is var_all(judge) + var_w(d) + 2 cov_w(judge, d) (weighted over
    the audited) and ``s2_d,h`` the sample variance of d in stratum h (pooled within strata for a
    stratum with one audited question). The question is the unit (the variance is clustered by
    question); the interval is theta +/- 1.96 sqrt(var), all NaN under 2 audited questions.
    ``human`` is read only where ``audited``; ``strata`` None: one stratum.
    """
    n, size = int(audited.sum()), judge.size
    if n < 2 or size < 2:
        return PPIEstimate(float("nan"), float("nan"), float("nan"), n)
    strata = np.zeros(size, np.int64) if strata is None else strata
    code, big_n, small_n, share = _strata(audited, strata)
    h, d, j = code[audited], human[audited] - judge[audited], judge[audited]
    w = (share / np.maximum(small_n, 1))[h]
    correction = float((w * d).sum())
    resid = d - (np.bincount(h, d, big_n.size) / np.maximum(small_n, 1))[h]
    within = np.bincount(h, resid**2, big_n.size) / np.maximum(small_n - 1, 1)
    several = small_n >= 2
    pooled = (resid**2).sum() / (small_n[several] - 1).sum() if several.any() else d.var(ddof=1)
    within = np.where(several, within, pooled)
    phase2 = float(
        (share**2 * (1 - small_n / big_n) * within / np.maximum(small_n, 1))[small_n > 0].sum()
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
    """Per response, under the final human verdicts: ``gamut`` ``[R, Q]`` question scores where
    the question is ``audited`` (every check has a final verdict), else NaN."""

    gamut: Floats
    audited: npt.NDArray[np.bool_]


def human_scores(final: npt.NDArray[np.int8], sc: Scores) -> HumanScores:
    """Score every audited question of every response under the final human verdicts."""
    checks, n_q = sc.inputs.checks, len(sc.inputs.questions)
    counts, _tiers, gamut = scored(final, checks, n_q, sc.config)
    per_q = np.bincount(checks.question, minlength=n_q)
    audited = (counts.sum(axis=(2, 3)) == per_q[None, :]) & (per_q[None, :] > 0)
    gamut[~audited] = np.nan
    return HumanScores(gamut, audited)


def ppi_columns(sc: Scores, humans: HumanScores) -> dict[str, Floats]:
    """The leaderboard's PPI columns (:data:`PPI_COLUMNS`) for every group: NaN where not
    defined (``audited_questions`` 0 for an incomplete group)."""
    judge_gamut, n_g = sc.level.gamut, sc.groups.sub.size
    response_of = sc.groups.sub * 2 + sc.groups.setting
    # each question's stratum in the audit draw within one response: its domain
    # (:func:`scoring.audit_sample.draw_sample` stratifies by submission, setting and domain)
    strata = np.unique([str(q.domain) for q in sc.inputs.questions], return_inverse=True)[1]
    out = {name: np.full(n_g, np.nan) for name in PPI_COLUMNS}
    out["audited_questions"] = np.zeros(n_g)
    rect = np.full(judge_gamut.shape, np.nan)  # design-weighted corrections, for the ranks
    for g in np.flatnonzero(sc.complete):
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
    boot = np.full((sc.weights.shape[0], n_g), np.nan)
    rects = _rect_sums(sc.weights, rect, corrected, response_of)
    boot[:, corrected] = sc.gamut.boot[:, corrected] + rects * 100.0
    asked, where = [], []
    for idx, _ranking in sc.rankings.values():
        rows = idx[~np.isnan(out["gamut_ppi"][idx])]
        if rows.size == 0:
            continue
        # a resample that draws fewer than two audited questions has no correction (NaN)
        asked.append(Ask(out["gamut_ppi"][rows], boot[:, rows], judge_gamut.shape[1]))
        where.append(rows)
    for rows, ranking in zip(where, rank_many(asked), strict=True):
        out["rank_ppi"][rows] = ranking.rank
        out["tie_group_ppi"][rows] = ranking.tie_group
    return out


def _rect_sums(weights: Floats, rect: Floats, groups: Ints, response_of: Ints) -> Floats:
    """``[B, len(groups)]`` resampled means of each group's design-weighted corrections
    (``rect``), a response's audited questions' weights taken once for all its judges."""
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
    sc: Scores, labels: AuditLabels, final: npt.NDArray[np.int8], humans: HumanScores
) -> pd.DataFrame:
    """One row per (response, question) with human labels on some checks but not a final human
    verdict on every one: left out of the correction, and named."""
    question = sc.inputs.checks.question
    started = np.zeros(humans.audited.shape, np.bool_)
    started[labels.response, question[labels.check]] = True
    resp, q = np.nonzero(started & ~humans.audited)
    done = final != NO_VERDICT
    n_final = [int(done[r, question == qq].sum()) for r, qq in zip(resp, q, strict=True)]
    return pd.DataFrame(
        {
            "setting": [SETTINGS[int(r) % len(SETTINGS)].value for r in resp],
            "submission_id": [sc.inputs.submission_ids[int(r) // len(SETTINGS)] for r in resp],
            "question_id": [sc.inputs.questions[int(x)].question_id for x in q],
            "n_checks": np.bincount(question, minlength=len(sc.inputs.questions))[q],
            "n_final": np.array(n_final, np.int64),
        },
        columns=list(TABLES["audit_incomplete"]),
    )


def agreement(confusion: npt.NDArray[np.int64], values: Floats) -> dict[str, float]:
    """``n_checks`` and the agreement figures (:func:`confusion_figures`) of a 4 x 4 confusion
    table (rows: the rater, columns: the reference), with ``leniency``: the rows' mean verdict
    value minus the columns', on the scale ``values``."""
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
    sc: Scores, code: Ints, prefix: Mapping[str, object], confusion: str
) -> list[dict[str, object]]:
    """Rows of one comparison (each pair's cell ``code``, of :func:`_code`) after the ``prefix``
    columns, for every check kind present and ``all``: agreement figures with their intervals
    over questions, and the confusion counts named by the ``confusion`` pattern (if any)."""
    shape = (int(sc.weights.shape[1]), len(KIND_ORDER), N_VERDICTS, N_VERDICTS)
    per_question = np.bincount(code, minlength=int(np.prod(shape))).reshape(shape)
    kinds = [k for k in range(per_question.shape[1]) if per_question[:, k].any()]
    names = ["all", *(KIND_ORDER[k].value for k in kinds)]
    floor = np.array([1] + [MIN_KIND_CHECKS] * len(kinds))  # the kinds' kappas have a floor
    stacked = with_total(per_question[:, kinds])
    ci = agreement_intervals(stacked, sc.weights, floor)
    values = verdict_values(sc.config)
    columns = [confusion.format(a=a, b=b) for a in _NAMES for b in _NAMES] if confusion else []
    rows: list[dict[str, object]] = []
    for t, (kind, table) in enumerate(zip(names, stacked.sum(axis=0), strict=True)):
        figures = agreement(table, values)
        if kind != "all" and figures["n_checks"] < MIN_KIND_CHECKS:  # too few for a kappa
            figures["kappa"] = figures["kappa_linear"] = float("nan")
        bounds = {f"{f}_{e}": float(ci[f][i][t]) for f in ci for i, e in enumerate(("lo", "hi"))}
        row: dict[str, object] = {**prefix, "kind": kind, **figures, **bounds}
        row["n_checks"] = int(figures["n_checks"])
        row.update(zip(columns, (int(x) for x in table.ravel()), strict=False))
        rows.append(row)
    return rows


def _code(checks: CheckIndex, c: Ints, rater: Ints, reference: Ints) -> Ints:
    """The cell code of :func:`_kind_rows` of the checks ``c``."""
    cell = checks.question[c] * len(KIND_ORDER) + checks.kind[c]
    return (cell * N_VERDICTS + rater) * N_VERDICTS + reference


def _judge_rows(
    sc: Scores, response: Ints, check: Ints, human: npt.NDArray[Any], confusion: str
) -> list[dict[str, object]]:
    """Per setting, judge and check kind (and ``all``): each judge's verdicts against the human
    ones on the (response, check) pairs given, where the judge judged (:func:`_kind_rows`)."""
    n_j = len(sc.inputs.judges)
    rows: list[dict[str, object]] = []
    for k, setting in enumerate(SETTINGS):
        mine = response % len(SETTINGS) == k
        for j, name in enumerate(sc.inputs.judges):
            group = response[mine] * n_j + j  # the group of (response, judge)
            v = sc.inputs.verdicts[group, check[mine]].astype(np.int64)
            ok = (v >= 0) & (sc.level.status[group] != Status.ABSENT)
            if ok.any():
                code = _code(sc.inputs.checks, check[mine][ok], v[ok], human[mine][ok])
                rows += _kind_rows(sc, code, {"setting": setting.value, "judge": name}, confusion)
    return rows


def judge_human(sc: Scores, final: npt.NDArray[np.int8]) -> pd.DataFrame:
    """The judges against the final human verdicts on every (response, check) that has both."""
    response, check = np.nonzero(final != NO_VERDICT)
    rows = _judge_rows(sc, response, check, final[response, check], "judge_{a}_human_{b}")
    return pd.DataFrame(rows, columns=list(TABLES["judge_human"]))


def judge_annotator(sc: Scores, labels: AuditLabels) -> pd.DataFrame:
    """The judges against each annotator's own label (not the adjudicated verdict), one pair per
    label line, like with like beside :func:`human_human`."""
    line = np.flatnonzero(~labels.adjudication)
    human = labels.verdict[line]
    rows = _judge_rows(sc, labels.response[line], labels.check[line], human, "")
    return pd.DataFrame(rows, columns=list(TABLES["judge_annotator"]))


def human_human(sc: Scores, labels: AuditLabels) -> pd.DataFrame:
    """Annotators against each other, over every pair of labels on one (response, check): the
    ceiling a judge can be held to (leniency: the lower annotator id's mean value minus the
    other's)."""
    cell, a, b = labels.annotator_pairs()
    response, check = np.divmod(cell, max(labels.n_checks, 1))
    rows: list[dict[str, object]] = []
    for k, setting in enumerate(SETTINGS):
        mine = response % len(SETTINGS) == k
        if mine.any():
            code = _code(sc.inputs.checks, check[mine], a[mine], b[mine])
            rows += _kind_rows(sc, code, {"setting": setting.value}, "first_{a}_second_{b}")
    return pd.DataFrame(rows, columns=list(TABLES["human_human"]))
