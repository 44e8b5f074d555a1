"""Page contexts: the score tables reshaped into the tables and figures each page shows.

Ordering, grouping and choosing rows happen here; no score is computed (the tables carry them).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from generator import charts
from generator.audit import PPI_COLUMNS, audit_info, has_corrected, mdd_sentence, ppi_sentence
from generator.render import (
    SETTING_LABELS,
    Cell,
    Column,
    Row,
    Table,
    file_id,
    human,
    setting_label,
    slug,
    table,
)
from generator.stamps import STAMP_COLUMN, STAMP_LEGEND, STAMP_LEGEND_FILTER, is_stale, stamp_cell
from generator.tables import ScoreTables
from scoring.numbers import f1, number, rounded, signed

#: A chart series: (name, values, lower bounds, upper bounds).
Series = tuple[str, list[Any], list[Any], list[Any]]


def submission_href(submission_id: str, root: str) -> str:
    """Relative link to a submission's page from a page whose root prefix is ``root``."""
    return f"{root}submissions/{file_id(submission_id)}.html"


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts (``to_dict(orient="records")`` in one conversion: pandas
    builds each record by indexing every column)."""
    cols, values = [str(c) for c in df.columns], df.to_numpy(dtype=object)
    values[_IS_NA(values).astype(bool)] = None  # as to_dict gives a nullable column's NA
    return [dict(zip(cols, row, strict=True)) for row in values.tolist()]


_IS_NA = np.frompyfunc(lambda v: v is pd.NA, 1, 1)


def _primary(tables: ScoreTables, name: str) -> pd.DataFrame:
    df = tables[name]
    return df[df["judge"] == tables.primary_judge]


def series(label: str, df: pd.DataFrame) -> Series:
    """The chart series of ``df``'s Gamut scores and their intervals."""
    return (label, df["gamut"].tolist(), df["gamut_lo"].tolist(), df["gamut_hi"].tolist())


def model_link(names: dict[str, str], root: str) -> Callable[[Any], dict[str, Cell]]:
    """The :func:`~generator.render.rows` ``special`` of a table of models: a record's "model"
    cell, linked to its page."""

    def cell(r: Any) -> dict[str, Cell]:
        sid = str(r["submission_id"])
        return {"model": Cell(names.get(sid, sid), href=submission_href(sid, root))}

    return cell


def model_cells(ids: list[str], names: dict[str, str], root: str) -> dict[str, dict[str, Cell]]:
    """Each model's "model" cell, linked to its page."""
    return {m: model_link(names, root)({"submission_id": m}) for m in ids}


def spread(
    df: pd.DataFrame,
    index: str,
    ids: list[str],
    by: str,
    groups: list[Any],
    label: Callable[[Any], str] = str,
    rank: bool = False,
    key: str = "g_",
) -> tuple[list[Column], dict[str, dict[str, Cell]], list[Series]]:
    """One "<group> [95% CI]" column (and a rank column with ``rank``) per value of ``by``, a
    row of cells per id of ``index``, and a chart series per group."""
    cols: list[Column] = []
    cells: dict[str, dict[str, Cell]] = {i: {} for i in ids}
    out: list[Series] = []
    for g in groups:
        part = df[df[by] == g]
        part = part.set_index(part[index].astype(str)).reindex(ids)
        cols.append(Column(f"{key}{str(g).lower()}", f"{label(g)} [95% CI]", "ci", src="gamut"))
        if rank:
            cols.append(Column(f"r_{str(g).lower()}", f"{label(g)} rank", "integer", src="rank"))
        for i, r in zip(ids, records(part), strict=True):
            cells[i] |= {c.key: c.cell(r) for c in cols[-1 - rank :]}
        out.append(series(str(label(g)), part))
    return cols, cells, out


def ordered_settings(df: pd.DataFrame) -> list[str]:
    """The settings present in ``df``, multimodal first."""
    order = list(SETTING_LABELS)
    present = {str(s) for s in df["setting"].unique()}
    return sorted(present, key=lambda s: (order.index(s) if s in order else len(order), s))


def _rank_order(df: pd.DataFrame) -> pd.DataFrame:
    """Complete rows by rank, then the rest by score."""
    # rank is a nullable integer column in the score tables: compare as floats, NA last
    key = (
        pd.to_numeric(df["rank"], errors="coerce")
        .astype("float64")
        .where(df["status"] == "complete")
    )
    return (
        df.assign(_k=key.fillna(math.inf), _g=-df["gamut"].fillna(-math.inf))
        .sort_values(["_k", "_g"])
        .drop(columns=["_k", "_g"])
    )


def ranked_ids(tables: ScoreTables) -> list[str]:
    """Every submission of the leaderboard, in the primary judge's order of its first setting."""
    lb = _primary(tables, "leaderboard")
    out: list[str] = []
    for setting in ordered_settings(lb):
        out += [str(s) for s in _rank_order(lb[lb["setting"] == setting])["submission_id"]]
    return list(dict.fromkeys(out))


def shown_names(tables: ScoreTables) -> dict[str, str]:
    """The ranked submissions' display names (:func:`model_names`), in rank order."""
    names = model_names(tables)
    return {sid: names[sid] for sid in ranked_ids(tables)}


def model_names(tables: ScoreTables) -> dict[str, str]:
    """Display name of each submission, unique: a name shared by two submissions gets its id.

    Rows and chart categories are keyed by submission id; this keeps their labels apart too.
    """
    lb = tables["leaderboard"]
    names = {str(k): str(v) for k, v in zip(lb["submission_id"], lb["model_name"], strict=True)}
    counts = Counter(" ".join(n.casefold().split()) for n in names.values())
    return {
        sid: f"{name} ({sid})" if counts[" ".join(name.casefold().split())] > 1 else name
        for sid, name in names.items()
    }


_LEADERBOARD = [
    Column("rank", "Rank", "rank", "Rank by the primary judge; in brackets the 95% rank range"),
    Column("model", "Model"),
    Column("gamut", "Gamut [95% CI]", "ci", "Gamut score, 100 x the mean question score"),
    Column("tie", "Tie group", "integer", "1 + the models significantly better", "tie_group"),
    Column("ac", "AC", "f1", "Answer-critical tier score"),
    Column("v", "V", "f1", "Valuable tier score"),
    Column("c", "C", "f1", "Context tier score"),
    Column("contra", "Contradicted", "pct", "Share of checks the response contradicts",
           "share_contradicts"),
    Column("text_only", "Text-only", "f1", "Gamut score with the entity named in text"),
    Column("gap", "Gap [95% CI]", "signed_ci", "Text-only minus multimodal"),
    Column("organisation", "Organisation"),
    Column("open", "Open weights", "yes_no", src="open_weights"),
    Column("setting", "Setting"),
    Column("chars", "Length", "integer", "Mean response length in characters",
           "mean_response_chars"),
    Column("date", "Date"),
    Column("status", "Status"),
    STAMP_COLUMN,
]  # fmt: skip


def _leaderboard_rows(lb: pd.DataFrame, names: dict[str, str], root: str) -> list[Row]:
    """The leaderboard's rows, setting by setting, each in rank order."""
    out = []
    cols = _LEADERBOARD[:4] + PPI_COLUMNS + _LEADERBOARD[4:]  # every column a row may show
    for setting in ordered_settings(lb):
        for r in records(_rank_order(lb[lb["setting"] == setting])):
            sid = str(r["submission_id"])
            cells = {c.key: c.cell(r) for c in cols} | {
                "model": Cell(names[sid], href=submission_href(sid, root)),
                "setting": Cell(setting_label(setting)),
                "date": Cell(str(r["date"])[:10] if r["date"] is not None else None),
                "stamp": stamp_cell(r),
            }
            attrs = {"setting": setting, "organisation": str(r["organisation"]),
                     "open": "yes" if r["open_weights"] else "no",
                     "fresh": "no" if is_stale(r) else "yes", "sid": sid}  # fmt: skip
            out.append(Row(cells, attrs))
    return out


def leaderboard(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """The home page: primary-judge leaderboard in every setting, with filters and a chart."""
    # the text-only score and the gap shown in every setting's row are the modality table's
    mod = _primary(tables, "modality")[["submission_id", "text_only", "gap", "gap_lo", "gap_hi"]]
    lb = _primary(tables, "leaderboard").drop(columns=mod.columns[1:], errors="ignore")
    lb = lb.merge(mod, on="submission_id", how="left")
    settings = ordered_settings(lb)
    names = model_names(tables)
    corrected = has_corrected(lb)
    order = _rank_order(lb[lb["setting"] == settings[0]]) if settings else lb
    ids = [str(x) for x in order["submission_id"]]
    by_setting = [
        series(setting_label(s), lb[lb["setting"] == s].set_index("submission_id").reindex(ids))
        for s in settings
    ]
    n_stale = sum(is_stale(r) for r in records(lb))
    cols = _LEADERBOARD[:4] + PPI_COLUMNS + _LEADERBOARD[4:] if corrected else _LEADERBOARD
    simulated = bool((audit_info(tables) or {}).get("simulated"))
    return {
        "table": Table(
            cols, _leaderboard_rows(lb, names, root), "Leaderboard", "leaderboard-table"
        ),
        "settings": [(s, setting_label(s)) for s in settings],
        "organisations": sorted({str(o) for o in lb["organisation"]}),
        "figure": charts.dot_ci([names[sid] for sid in ids], by_setting, keys=settings, ids=ids),
        "n_models": lb["submission_id"].nunique(),
        "n_stale": n_stale,
        "stamp_legend": STAMP_LEGEND_FILTER if n_stale else STAMP_LEGEND,
        "n_questions": int(lb["n_questions"].max()) if len(lb) else 0,
        "built": str(tables.provenance.get("generated_at") or "unknown")[:16].replace("T", " "),
        "mdd": mdd_sentence(tables),
        "ppi": (
            ppi_sentence(lb, simulated, tables.frames.get("audit_incomplete"), names)
            if corrected
            else None
        ),
    }


def domains(tables: ScoreTables, root: str = "../") -> dict[str, Any]:
    """The domains overview: a model x domain heatmap per setting, and the domain list."""
    bd = _primary(tables, "by_domain")
    names = model_names(tables)
    lb = _primary(tables, "leaderboard")
    heatmaps = []
    for setting in ordered_settings(bd):
        sub = bd[bd["setting"] == setting]
        order = [str(s) for s in _rank_order(lb[lb["setting"] == setting])["submission_id"]]
        order = [s for s in order if s in set(sub["submission_id"])]
        doms = sorted({str(d) for d in sub["domain"]})
        piv = sub.pivot_table(
            index="submission_id", columns="domain", values="gamut", aggfunc="first"
        ).reindex(index=order, columns=doms)
        fig = charts.heatmap([human(d) for d in doms], [names.get(s, s) for s in order],
                             piv.to_numpy().tolist(), x_title="Domain")  # fmt: skip
        heatmaps.append((setting_label(setting), fig))
    doms = sorted({str(d) for d in bd["domain"]})
    return {
        "heatmaps": heatmaps,
        "domains": [(d, slug(d) + ".md") for d in doms],
        "labels": {d: human(d) for d in doms},
    }


_DOMAIN = [
    Column("rank", "Rank", "integer", "Rank within this domain"),
    Column("model", "Model"),
    Column("gamut", "Gamut [95% CI]", "ci"),
    Column("tie", "Tie group", "integer", "1 + the models significantly better", "tie_group"),
    Column("ac", "AC", "f1"),
    Column("v", "V", "f1"),
    Column("c", "C", "f1"),
    Column("n", "Questions", "integer", src="n_questions"),
]


def domain(tables: ScoreTables, name: str, root: str = "../") -> dict[str, Any]:
    """One domain: its ranking per setting and a chart with CIs."""
    bd = _primary(tables, "by_domain")
    bd = bd[bd["domain"].astype(str) == name]
    names = model_names(tables)
    sections = []
    for setting in ordered_settings(bd):
        sub = bd[bd["setting"] == setting].sort_values(["rank", "gamut"], ascending=[True, False])
        ids = [str(s) for s in sub["submission_id"]]
        label = setting_label(setting)
        ranking = table(_DOMAIN, records(sub), model_link(names, root), f"{human(name)}: {label}")
        fig = charts.dot_ci([names.get(s, s) for s in ids], [series(label, sub)])
        sections.append((label, ranking, fig))
    n_q = int(bd["n_questions"].max()) if len(bd) else 0
    ceiling = (
        float(bd["ci_coverage_ceiling"].min()) if "ci_coverage_ceiling" in bd and len(bd) else 1.0
    )
    return {
        "name": human(name),
        "sections": sections,
        "n_questions": n_q,
        # stated when the question count bounds the interval's coverage below 95%
        "coverage_ceiling": f"{100 * ceiling:.1f}%" if ceiling < 0.95 else None,
    }


def tax_sentence(summary: dict[str, Any]) -> str:
    """One plain sentence on how uniform the visual identification tax is, worded by rule.

    The rule: the spread of the per-model gap (its standard deviation relative to its mean) says
    whether the tax is uniform; the sign of min and max says whether every model pays it.
    """
    n = int(summary.get("n_models") or 0)
    figures = [summary.get(f"{k}_gap") for k in ("mean", "sd", "min", "max")]
    if n < 2 or any(number(v) is None for v in figures):
        return "Too few models have both a multimodal and a text-only score to judge the gap."
    # the words follow the figures as printed: a gap of -0.03 prints as 0.0, and reads as no loss
    mean, sd, lo, hi = (rounded(v) or 0.0 for v in figures)
    if lo > 0:
        who = f"All {n} models score higher when the entity is named in text"
    elif lo == 0:
        who = (
            f"None of the {n} models scores lower (at this precision) when the entity is named "
            "in text"
        )
    elif hi < 0:
        who = f"All {n} models score lower when the entity is named in text"
    else:
        who = f"The {n} models do not all gain when the entity is named in text"
    spread = sd / abs(mean) if mean != 0 else math.inf
    if spread <= 0.25:
        verdict = "so the visual identification tax is nearly uniform across models"
    elif spread <= 0.5:
        verdict = "so the visual identification tax is fairly uniform across models"
    else:
        verdict = "so the visual identification tax differs markedly between models"
    return (
        f"{who}: the gap averages {signed(mean)} points, ranges from {signed(lo)} to "
        f"{signed(hi)} (standard deviation {f1(sd)}), {verdict}."
    )


_MODALITY = [
    Column("model", "Model"),
    Column("mm", "Multimodal [95% CI]", "ci", src="multimodal"),
    Column("to", "Text-only [95% CI]", "ci", src="text_only"),
    Column("gap", "Gap [95% CI]", "signed_ci", "Text-only minus multimodal"),
]


def multimodal(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Multimodal vs text-only for the primary judge."""
    mod = _primary(tables, "modality").sort_values("multimodal", ascending=False)
    names = model_names(tables)
    ids = [str(s) for s in mod["submission_id"]]
    labels = [names.get(s, s) for s in ids]
    summary = tables.modality_summary.get(tables.primary_judge, {})
    gap = ("Gap", mod["gap"].tolist(), mod["gap_lo"].tolist(), mod["gap_hi"].tolist())
    return {
        "dumbbell": charts.dumbbell(labels, mod["multimodal"].tolist(), mod["text_only"].tolist(),
                                    left_name="Multimodal", right_name="Text-only"),
        "gap_figure": charts.dot_ci(labels, [gap], x_title="Text-only minus multimodal (points)"),
        "table": table(_MODALITY, records(mod), model_link(names, root),
                       "Multimodal and text-only scores"),
        "summary": summary,
        "sentence": tax_sentence(summary),
    }  # fmt: skip


def groups(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Popularity buckets and egocentric vs not, per model and setting."""
    names = model_names(tables)
    out = []
    for name, col, title, labeller in (
        ("by_popularity", "popularity", "Popularity", str),
        ("by_egocentric", "egocentric", "Egocentric", lambda v: "egocentric" if v else "other"),
    ):
        df = _primary(tables, name)
        for setting in ordered_settings(df):
            sub = df[df["setting"] == setting]
            values = list(dict.fromkeys(sub[col].tolist()))
            if col == "popularity":
                order = {"head": 0, "torso": 1, "tail": 2}
                values.sort(key=lambda v: order.get(str(v), 9))
            by_score = sub.sort_values("gamut", ascending=False)["submission_id"].astype(str)
            models = list(dict.fromkeys(by_score))
            cols, cells, by_value = spread(
                sub, "submission_id", models, col, values, labeller, key="g"
            )
            first = model_cells(models, names, root)
            out.append(
                {
                    "title": f"{title}: {setting_label(setting)}",
                    "table": Table(
                        [_MODALITY[0], *cols], [Row(first[m] | cells[m]) for m in models]
                    ),
                    "figure": charts.dot_ci([names.get(m, m) for m in models], by_value),
                }
            )
    return {"sections": out}
