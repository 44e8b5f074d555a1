"""The per-model tables: question scores, leaderboard, breakdowns, check kinds, modality. Each
builder selects from :class:`~scoring.tables.scores.Scores` and labels (arithmetic: ``core``,
``bootstrap``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.questions import Popularity
from scoring.scorer import tier_scores
from scoring.tables.bootstrap import (
    Ask,
    coverage_ceiling,
    paired,
    percentile_ci,
    rank_many,
    weighted_means,
)
from scoring.tables.checks import N_KIND_KEYS, kind_of
from scoring.tables.columns import PPI_COLUMNS, TABLES
from scoring.tables.core import N_VERDICTS, Status, count_verdicts
from scoring.tables.cost import JUDGE_COST_COLUMNS, model_tokens
from scoring.tables.judges import kendall_tau_b
from scoring.tables.matrix import SETTINGS
from scoring.tables.scores import Groups, Scores

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

SHARES = ("share_meets", "share_partial", "share_missing", "share_contradicts")
TIER_COLUMNS = ("ac", "v", "c")


def _labels(sc: Scores, g: npt.NDArray[np.int64]) -> dict[str, Any]:
    """The submission, setting and judge columns of the groups ``g``."""
    names = (sc.inputs.submission_ids, [s.value for s in SETTINGS], sc.inputs.judges)
    codes = (sc.groups.sub, sc.groups.setting, sc.groups.judge)
    columns = zip(("submission_id", "setting", "judge"), names, codes, strict=True)
    return {c: np.array(n, dtype=object)[code[g]] for c, n, code in columns}


def question_scores(sc: Scores) -> pd.DataFrame:
    """One row per (complete group, question): raw tier and Gamut scores in [-1, 1] (``ac_raw``,
    ``v_raw``, ``c_raw``, ``gamut_raw``), verdict counts and the response length."""
    qs = sc.inputs.questions
    g = np.flatnonzero(sc.complete)
    n_q = len(qs)
    rows_g = np.repeat(g, n_q)
    rows_q = np.tile(np.arange(n_q), g.size)

    def cat(values: list[str], codes: npt.NDArray[np.int64]) -> pd.Categorical[str]:
        return pd.Categorical(values).take(codes)  # categories sorted

    level = sc.level
    counts = level.counts.sum(axis=2)[rows_g, rows_q]  # summed over tiers before the rows repeat
    df = pd.DataFrame(
        {
            "submission_id": cat(list(sc.inputs.submission_ids), sc.groups.sub[rows_g]),
            "setting": cat([s.value for s in SETTINGS], sc.groups.setting[rows_g]),
            "judge": cat(list(sc.inputs.judges), sc.groups.judge[rows_g]),
            "question_id": cat([q.question_id for q in qs], rows_q),
            "domain": cat([q.domain for q in qs], rows_q),
            "popularity": cat([q.popularity.value for q in qs], rows_q),
            "egocentric": np.array([q.egocentric for q in qs], np.bool_)[rows_q],
        }
    )
    for t, name in enumerate(TIER_COLUMNS):
        df[f"{name}_raw"] = level.tiers[rows_g, rows_q, t]  # in [-1, 1]: published scores are x100
    df["gamut_raw"] = level.gamut[rows_g, rows_q]
    for v, name in enumerate(("n_meets", "n_partial", "n_missing", "n_contradicts")):
        df[name] = counts[:, v]
    chars = sc.inputs.response_chars[sc.groups.sub[rows_g], sc.groups.setting[rows_g], rows_q]
    df["response_chars"] = pd.array(chars, dtype="Float64").astype("Int64")
    return df


def _meta_columns(sc: Scores, subs: npt.NDArray[np.int64]) -> dict[str, list[Any]]:
    metas = [sc.inputs.meta[sc.inputs.submission_ids[int(s)]] for s in subs]
    own = ("model_name", "organisation", "model_family", "open_weights", "parameters")
    out = {f: [getattr(m, f) for m in metas] for f in own}
    out["date"] = [m.date.isoformat() for m in metas]
    out["link"] = [str(m.link) for m in metas]
    out["demo"] = [m.demo for m in metas]
    for f in ("decoding", "tools", "web_access", "system_prompt", "notes"):
        out[f"production_{f}"] = [getattr(m.production, f) for m in metas]
    trained = [m.training_data for m in metas]
    out["training_datasets"] = ["; ".join(t.datasets) if t else None for t in trained]
    out["contamination"] = [t.contamination if t else None for t in trained]
    out["training_notes"] = [t.notes if t else None for t in trained]
    return out


def _ranks(sc: Scores) -> dict[str, Floats]:
    n = sc.groups.sub.size
    out = {k: np.full(n, np.nan) for k in ("rank", "rank_lo", "rank_hi", "tie_group")}
    for idx, ranking in sc.rankings.values():
        for k, values in out.items():
            values[idx] = getattr(ranking, k)
    return out


def _typed(name: str, values: npt.NDArray[Any]) -> Any:
    """A leaderboard column: a nullable integer column where the dictionary says int64."""
    if TABLES["leaderboard"][name][0] == "int64":
        return pd.array(values, dtype="Float64").astype("Int64")
    return values


def modality_pairs(sc: Scores, complete_only: bool = True) -> tuple[Ints, Ints]:
    """Group indices (multimodal, text-only) of every (submission, judge), by default only those
    complete in both settings."""
    n_s, n_j = len(sc.inputs.submission_ids), len(sc.inputs.judges)
    s, j = np.divmod(np.arange(n_s * n_j, dtype=np.int64), n_j)
    mm, to = Groups.index(s, 0, j, n_j), Groups.index(s, 1, j, n_j)
    ok = sc.complete[mm] & sc.complete[to] if complete_only else np.ones(mm.size, np.bool_)
    return mm[ok], to[ok]


def leaderboard(
    sc: Scores,
    corrected: dict[str, Floats] | None = None,
    costs: dict[str, Floats] | None = None,
) -> pd.DataFrame:
    """One row per (submission, setting, judge) that has responses, complete or not, with the
    PPI columns per group (:func:`scoring.tables.audit.ppi_columns`) and the judging cost columns
    (:func:`scoring.tables.cost.judging_cost`): empty when None (no audit, nothing known)."""
    g = np.flatnonzero(sc.level.status != Status.ABSENT)
    complete = sc.complete[g]
    df = pd.DataFrame(_labels(sc, g))
    df["primary"] = sc.groups.judge[g] == sc.primary
    df["status"] = np.where(complete, "complete", "incomplete")
    df["n_questions"] = len(sc.inputs.questions)
    df["n_checks_missing"] = sc.inputs.checks.size - sc.level.n_judged[g]
    df["n_checks"] = sc.inputs.checks.size
    for name, est in (("gamut", sc.gamut), *zip(TIER_COLUMNS, sc.tiers, strict=True)):
        df[name], df[f"{name}_lo"], df[f"{name}_hi"] = est.value[g], est.lo[g], est.hi[g]
    mix = sc.level.counts.sum(axis=(1, 2))[g].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mix = mix / mix.sum(axis=1, keepdims=True)
    mix[~complete] = np.nan
    for v, name in enumerate(SHARES):
        df[name] = mix[:, v]
    chars = sc.inputs.response_chars[sc.groups.sub[g], sc.groups.setting[g]]
    defined = ~np.isnan(chars)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["mean_response_chars"] = np.where(defined, chars, 0).sum(1) / defined.sum(1)
    n = sc.groups.sub.size
    nan = np.full(n, np.nan)
    no_audit = {**dict.fromkeys(PPI_COLUMNS, nan), "audited_questions": np.zeros(n)}
    model = model_tokens(sc.inputs.model_usage, len(sc.inputs.judges))
    meta = _meta_columns(sc, sc.groups.sub[g])  # already one value per row
    parts = (costs or dict.fromkeys(JUDGE_COST_COLUMNS, nan), model, _ranks(sc))
    for part in (*parts, _modality_columns(sc), meta, corrected or no_audit):
        for name, values in part.items():
            df[name] = values if part is meta else _typed(name, values[g])
    order = np.lexsort(
        (
            df["submission_id"].to_numpy(),
            df["rank"].fillna(10**9).to_numpy(),
            sc.groups.judge[g],
            sc.groups.setting[g],
        )
    )
    return df.iloc[order].reset_index(drop=True)


def _modality_columns(sc: Scores) -> dict[str, Floats]:
    """Per group: the text-only score and the visual-identification gap (text-only minus
    multimodal, paired CI) of its submission and judge, so both setting rows carry them."""
    out = {
        name: np.full(sc.groups.sub.size, np.nan)
        for name in ("text_only", "gap", "gap_lo", "gap_hi")
    }
    mm_all, to_all = modality_pairs(sc, complete_only=False)
    out["text_only"][mm_all] = out["text_only"][to_all] = sc.gamut.value[to_all]
    mm, to = modality_pairs(sc)
    diff = paired(sc.gamut.take(to), sc.gamut.take(mm))
    for rows in (mm, to):
        out["gap"][rows], out["gap_lo"][rows], out["gap_hi"][rows] = diff.value, diff.lo, diff.hi
    return out


def _subset_means(values: Floats, member: Floats) -> Floats:
    """``[N, Q]`` values -> ``[N, D]`` means over each question subset (NaN entries left out)."""
    defined = ~np.isnan(values)
    num = np.where(defined, values, 0.0) @ member
    den = defined.astype(np.float64) @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def breakdown(sc: Scores, column: str) -> pd.DataFrame:
    """One row per (complete group, value of ``column``: domain, popularity or egocentric), from
    the global resamples restricted to the value's questions; ``rank`` and ``tie_group`` rank the
    models of each (setting, judge) within the value, as the leaderboard does."""
    values = [getattr(v, "value", v) for v in (getattr(q, column) for q in sc.inputs.questions)]
    if column == "popularity":
        order = [p.value for p in Popularity if p.value in values]
    else:
        order = sorted(set(values))
    position = {v: d for d, v in enumerate(order)}
    code = np.array([position[v] for v in values], np.int64)
    member = np.zeros((code.size, len(order)))
    member[np.arange(code.size), code] = 1.0
    g = np.flatnonzero(sc.complete)
    gamut = sc.level.gamut[g]
    means = _subset_means(gamut, member) * 100.0
    rank, tie = (np.full((g.size, len(order)), np.nan) for _ in range(2))
    position_of = {int(x): i for i, x in enumerate(g)}
    boots = [
        weighted_means(sc.weights, gamut, np.flatnonzero(code == d)) * 100.0
        for d in range(len(order))
    ]
    # one pass of percentiles over every value's resamples: [B, g * values], value-major
    every = np.concatenate(boots, axis=1)
    n = np.repeat(member.sum(axis=0).astype(np.int64), g.size)  # value-major, as ``every``
    ci = percentile_ci(every, overwrite=True, n=n)
    lo, hi = (x.reshape(len(order), g.size).T for x in ci)
    del every
    # rank within each (setting, judge): its rows here
    ranked = [
        np.array([position_of[int(x)] for x in idx], np.int64)
        for idx, _ in sc.rankings.values()
        if idx.size
    ]
    asked, where = [], []
    for d, boot in enumerate(boots):
        for rows in ranked:
            asked.append(Ask(means[rows, d], boot[:, rows], int(member[:, d].sum())))
            where.append((rows, d))
    for (rows, d), r in zip(where, rank_many(asked), strict=True):
        rank[rows, d], tie[rows, d] = r.rank, r.tie_group
    rows_g = np.repeat(g, len(order))
    df = pd.DataFrame(_labels(sc, rows_g))
    df[column] = [order[d] for d in np.tile(np.arange(len(order)), g.size)]
    df["n_questions"] = np.tile(member.sum(axis=0).astype(np.int64), g.size)
    df["ci_coverage_ceiling"] = [coverage_ceiling(int(n)) for n in df["n_questions"]]
    df["gamut"] = means.ravel()
    df["gamut_lo"], df["gamut_hi"] = lo.ravel(), hi.ravel()
    df["rank"] = pd.array(rank.ravel(), dtype="Float64").astype("Int64")
    df["tie_group"] = pd.array(tie.ravel(), dtype="Float64").astype("Int64")
    for t, name in enumerate(TIER_COLUMNS):
        df[name] = (_subset_means(sc.level.tiers[g, :, t], member) * 100.0).ravel()
    return df


def by_kind(sc: Scores) -> pd.DataFrame:
    """One row per (complete group, check kind, secondary) with the pooled verdict mix and score."""
    key = sc.inputs.checks.kind_key
    g = np.flatnonzero(sc.complete)
    counts = count_verdicts(sc.inputs.verdicts[g], key, N_KIND_KEYS)  # [g, key, verdict]
    n_checks = np.bincount(key, minlength=N_KIND_KEYS)
    keys = np.flatnonzero(n_checks)
    rows_g = np.repeat(np.arange(g.size), keys.size)
    rows_k = np.tile(keys, g.size)
    df = pd.DataFrame(_labels(sc, g[rows_g]))
    df["kind"] = [kind_of(int(k))[0].value for k in rows_k]
    df["secondary"] = np.array([kind_of(int(k))[1] for k in rows_k], np.bool_)
    df["n_checks"] = n_checks[rows_k]
    c = counts[rows_g, rows_k].astype(np.float64)
    total = np.maximum(c.sum(axis=1, keepdims=True), 1.0)
    for v, name in enumerate(SHARES):
        df[name] = c[:, v] / total[:, 0]
    df["score"] = tier_scores(c.reshape(-1, N_VERDICTS), sc.config) * 100.0
    return df


def modality(sc: Scores) -> pd.DataFrame:
    """One row per (submission, judge) complete in both settings: both scores and the paired gap."""
    mm, to = modality_pairs(sc)
    a, b = sc.gamut.take(mm), sc.gamut.take(to)
    df = pd.DataFrame(_labels(sc, mm)).drop(columns="setting")
    df["primary"] = sc.groups.judge[mm] == sc.primary
    for name, est in (("multimodal", a), ("text_only", b), ("gap", paired(b, a))):
        df[name], df[f"{name}_lo"], df[f"{name}_hi"] = est.value, est.lo, est.hi
    return df


def incomplete(sc: Scores) -> pd.DataFrame:
    """One row per incomplete (submission, setting, judge), with how much is missing."""
    g = np.flatnonzero(sc.level.status == Status.INCOMPLETE)
    k = sc.inputs.checks.size
    rows, cols = np.nonzero(sc.inputs.verdicts[g] < 0)
    affected = np.zeros((g.size, len(sc.inputs.questions)), np.bool_)
    affected[rows, sc.inputs.checks.question[cols]] = True
    df = pd.DataFrame(_labels(sc, g))
    df["n_expected"] = k
    df["n_judged"] = sc.level.n_judged[g]
    df["n_missing"] = k - sc.level.n_judged[g]
    df["n_questions_affected"] = affected.sum(axis=1)
    return df


def modality_summary(sc: Scores, table: pd.DataFrame) -> pd.DataFrame:
    """Per judge: spread of the gap across models, its correlation with the mean of the two
    scores, and Kendall tau-b between the multimodal and text-only orderings."""
    rows = []
    for name in sc.inputs.judges:
        t = table[table["judge"] == name]
        gap = t["gap"].to_numpy(np.float64)
        mm = t["multimodal"].to_numpy(np.float64)
        to = t["text_only"].to_numpy(np.float64)
        n = int(gap.size)
        mean = (mm + to) / 2  # not mm alone: its noise enters the gap with a minus sign
        varied = n >= 3 and np.ptp(gap) > 0 and np.ptp(mean) > 0
        rows.append(
            {
                "judge": name,
                "primary": name == sc.inputs.judges[sc.primary],
                "n_models": n,
                "mean_gap": float(gap.mean()) if n else np.nan,
                "sd_gap": float(gap.std(ddof=1)) if n > 1 else np.nan,
                "min_gap": float(gap.min()) if n else np.nan,
                "max_gap": float(gap.max()) if n else np.nan,
                "corr_gap_mean": float(np.corrcoef(gap, mean)[0, 1]) if varied else np.nan,
                "kendall_tau": kendall_tau_b(mm, to),
            }
        )
    return pd.DataFrame(rows, columns=list(TABLES["modality_summary"]))
