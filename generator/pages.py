"""Page contexts: the score tables reshaped into the tables and figures each page shows.

Ordering, grouping and choosing rows happen here; no score is computed (the tables carry them).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from generator import charts
from generator.audit import (
    PPI_COLUMNS,
    audit_info,
    has_corrected,
    mdd_sentence,
    ppi_cells,
    ppi_sentence,
)
from generator.render import (
    SETTING_LABELS,
    Cell,
    Column,
    Row,
    Table,
    f1,
    file_id,
    human,
    setting_label,
    signed,
    slug,
)
from generator.stamps import (
    STAMP_COLUMN,
    STAMP_LEGEND,
    STAMP_LEGEND_FILTER,
    fresh_attr,
    is_stale,
    stamp_cell,
)
from generator.tables import ScoreTables
from scoring.numbers import rounded


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


def _primary(df: pd.DataFrame, judge: str) -> pd.DataFrame:
    return df[df["judge"] == judge]


def _settings(df: pd.DataFrame) -> list[str]:
    present = [str(s) for s in df["setting"].unique()]
    return sorted(
        present,
        key=lambda s: (
            s not in SETTING_LABELS,
            list(SETTING_LABELS).index(s) if s in SETTING_LABELS else 0,
            s,
        ),
    )


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


def ordered_settings(df: pd.DataFrame) -> list[str]:
    """The settings present in ``df``, multimodal first."""
    return _settings(df)


def ranked_ids(tables: ScoreTables) -> list[str]:
    """Every submission of the leaderboard, in the primary judge's order of its first setting."""
    lb = _primary(tables["leaderboard"], tables.primary_judge)
    out: list[str] = []
    for setting in _settings(lb):
        out += [str(s) for s in _rank_order(lb[lb["setting"] == setting])["submission_id"]]
    return list(dict.fromkeys(out))


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


def _leaderboard_columns(corrected: bool) -> list[Column]:
    cols = [
        Column("rank", "Rank", "rank", "Rank by the primary judge; in brackets the 95% rank range"),
        Column("model", "Model", "text", numeric=False),
        Column("gamut", "Gamut [95% CI]", "ci", "Gamut score, 100 x the mean question score"),
        Column("tie", "Tie group", "integer", "1 + the models significantly better"),
        Column("ac", "AC", "f1", "Answer-critical tier score"),
        Column("v", "V", "f1", "Valuable tier score"),
        Column("c", "C", "f1", "Context tier score"),
        Column("contra", "Contradicted", "pct", "Share of checks the response contradicts"),
        Column("text_only", "Text-only", "f1", "Gamut score with the entity named in text"),
        Column("gap", "Gap [95% CI]", "signed_ci", "Text-only minus multimodal"),
        Column("organisation", "Organisation", "text", numeric=False),
        Column("open", "Open weights", "yes_no"),
        Column("setting", "Setting", "text", numeric=False),
        Column("chars", "Length", "integer", "Mean response length in characters"),
        Column("date", "Date", "text", numeric=False),
        Column("status", "Status", "text", numeric=False),
        STAMP_COLUMN,
    ]
    if corrected:  # shown instead of rank, score and tie group by the "Corrected (PPI)" toggle
        cols[4:4] = PPI_COLUMNS
    return cols


def _leaderboard_row(
    r: dict[str, Any], setting: str, m: Any, name: str, root: str, corrected: bool
) -> Row:
    """One leaderboard row; ``m`` is the submission's modality row (None: none)."""
    sid = str(r["submission_id"])
    cells = {
        "rank": Cell(r["rank"], r["rank_lo"], r["rank_hi"]),
        "tie": Cell(r["tie_group"]),
        "model": Cell(name, href=submission_href(sid, root)),
        "organisation": Cell(r["organisation"]),
        "open": Cell(bool(r["open_weights"])),
        "setting": Cell(setting_label(setting)),
        "gamut": Cell(r["gamut"], r["gamut_lo"], r["gamut_hi"]),
        "ac": Cell(r["ac"]),
        "v": Cell(r["v"]),
        "c": Cell(r["c"]),
        "contra": Cell(r["share_contradicts"]),
        "text_only": Cell(None if m is None else m["text_only"]),
        "gap": Cell(*((None, None, None) if m is None else (m["gap"], m["gap_lo"], m["gap_hi"]))),
        "chars": Cell(r["mean_response_chars"]),
        "date": Cell(str(r["date"])[:10] if r["date"] is not None else None),
        "status": Cell(r["status"]),
        "stamp": stamp_cell(r),
        **(ppi_cells(r) if corrected else {}),
    }
    open_weights = "yes" if r["open_weights"] else "no"
    attrs = {"setting": setting, "organisation": str(r["organisation"]), "open": open_weights,
             "fresh": fresh_attr(r), "sid": sid}  # fmt: skip
    return Row(cells=cells, attrs=attrs)


def leaderboard(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """The home page: primary-judge leaderboard in every setting, with filters and a chart."""
    judge = tables.primary_judge
    lb = _primary(tables["leaderboard"], judge)
    mod = _primary(tables["modality"], judge).set_index("submission_id")
    settings = _settings(lb)
    names = model_names(tables)
    corrected = has_corrected(lb)
    rows = []
    for setting in settings:
        for r in records(_rank_order(lb[lb["setting"] == setting])):
            sid = str(r["submission_id"])
            m = mod.loc[sid] if sid in mod.index else None
            rows.append(_leaderboard_row(r, setting, m, names[sid], root, corrected))
    order = _rank_order(lb[lb["setting"] == settings[0]]) if settings else lb
    ids = [str(x) for x in order["submission_id"]]
    series = []
    for setting in settings:
        s = lb[lb["setting"] == setting].set_index("submission_id").reindex(ids)
        series.append((setting_label(setting), s["gamut"].tolist(), s["gamut_lo"].tolist(),
                       s["gamut_hi"].tolist()))  # fmt: skip
    n_stale = sum(is_stale(r) for r in records(lb))
    cols = _leaderboard_columns(corrected)
    simulated = bool((audit_info(tables) or {}).get("simulated"))
    return {
        "table": Table(cols, rows, caption="Leaderboard", table_id="leaderboard-table"),
        "settings": [(s, setting_label(s)) for s in settings],
        "organisations": sorted({str(o) for o in lb["organisation"]}),
        "figure": charts.dot_ci([names[sid] for sid in ids], series, keys=settings, ids=ids),
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
    judge = tables.primary_judge
    bd = _primary(tables["by_domain"], judge)
    names = model_names(tables)
    lb = _primary(tables["leaderboard"], judge)
    heatmaps = []
    for setting in _settings(bd):
        sub = bd[bd["setting"] == setting]
        order = [str(s) for s in _rank_order(lb[lb["setting"] == setting])["submission_id"]]
        order = [s for s in order if s in set(sub["submission_id"])]
        doms = sorted({str(d) for d in sub["domain"]})
        piv = sub.pivot_table(
            index="submission_id", columns="domain", values="gamut", aggfunc="first"
        ).reindex(index=order, columns=doms)
        heatmaps.append(
            (
                setting_label(setting),
                charts.heatmap(
                    [human(d) for d in doms],
                    [names.get(s, s) for s in order],
                    piv.to_numpy().tolist(),
                    x_title="Domain",
                ),
            )
        )
    doms = sorted({str(d) for d in bd["domain"]})
    return {
        "heatmaps": heatmaps,
        "domains": [(d, slug(d) + ".md") for d in doms],
        "labels": {d: human(d) for d in doms},
    }


def domain(tables: ScoreTables, name: str, root: str = "../") -> dict[str, Any]:
    """One domain: its ranking per setting and a chart with CIs."""
    judge = tables.primary_judge
    bd = _primary(tables["by_domain"], judge)
    bd = bd[bd["domain"].astype(str) == name]
    names = model_names(tables)
    sections = []
    for setting in _settings(bd):
        sub = bd[bd["setting"] == setting].sort_values(["rank", "gamut"], ascending=[True, False])
        cols = [
            Column("rank", "Rank", "integer", "Rank within this domain"),
            Column("model", "Model", numeric=False),
            Column("gamut", "Gamut [95% CI]", "ci"),
            Column("tie", "Tie group", "integer", "1 + the models significantly better"),
            Column("ac", "AC", "f1"),
            Column("v", "V", "f1"),
            Column("c", "C", "f1"),
            Column("n", "Questions", "integer"),
        ]
        rows = [
            Row(
                {
                    "rank": Cell(r["rank"]),
                    "model": Cell(
                        names.get(str(r["submission_id"])),
                        href=submission_href(str(r["submission_id"]), root),
                    ),
                    "gamut": Cell(r["gamut"], r["gamut_lo"], r["gamut_hi"]),
                    "tie": Cell(r["tie_group"]),
                    "ac": Cell(r.get("ac")),
                    "v": Cell(r.get("v")),
                    "c": Cell(r.get("c")),
                    "n": Cell(r["n_questions"]),
                }
            )
            for r in records(sub)
        ]
        labels = [names.get(str(s), str(s)) for s in sub["submission_id"]]
        fig = charts.dot_ci(
            labels,
            [
                (
                    setting_label(setting),
                    sub["gamut"].tolist(),
                    sub["gamut_lo"].tolist(),
                    sub["gamut_hi"].tolist(),
                )
            ],
        )
        sections.append(
            (
                setting_label(setting),
                Table(cols, rows, caption=f"{human(name)}: {setting_label(setting)}"),
                fig,
            )
        )
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
    mean, sd = summary.get("mean_gap"), summary.get("sd_gap")
    lo, hi = summary.get("min_gap"), summary.get("max_gap")
    if (
        n < 2
        or mean is None
        or sd is None
        or lo is None
        or hi is None
        or any(isinstance(v, float) and math.isnan(v) for v in (mean, sd, lo, hi))
    ):
        return "Too few models have both a multimodal and a text-only score to judge the gap."
    # the words follow the figures as printed: a gap of -0.03 prints as 0.0, and reads as no loss
    mean, sd, lo, hi = (rounded(v) or 0.0 for v in (mean, sd, lo, hi))
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


def multimodal(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Multimodal vs text-only for the primary judge."""
    judge = tables.primary_judge
    mod = _primary(tables["modality"], judge).sort_values("multimodal", ascending=False)
    names = model_names(tables)
    labels = [names.get(str(s), str(s)) for s in mod["submission_id"]]
    cols = [
        Column("model", "Model", numeric=False),
        Column("mm", "Multimodal [95% CI]", "ci"),
        Column("to", "Text-only [95% CI]", "ci"),
        Column("gap", "Gap [95% CI]", "signed_ci", "Text-only minus multimodal"),
    ]
    rows = [
        Row(
            {
                "model": Cell(
                    names.get(str(r["submission_id"])),
                    href=submission_href(str(r["submission_id"]), root),
                ),
                "mm": Cell(r["multimodal"], r.get("multimodal_lo"), r.get("multimodal_hi")),
                "to": Cell(r["text_only"], r.get("text_only_lo"), r.get("text_only_hi")),
                "gap": Cell(r["gap"], r["gap_lo"], r["gap_hi"]),
            }
        )
        for r in records(mod)
    ]
    summary = tables.modality_summary.get(judge, {})
    return {
        "dumbbell": charts.dumbbell(
            labels,
            mod["multimodal"].tolist(),
            mod["text_only"].tolist(),
            left_name="Multimodal",
            right_name="Text-only",
        ),
        "gap_figure": charts.dot_ci(
            labels,
            [("Gap", mod["gap"].tolist(), mod["gap_lo"].tolist(), mod["gap_hi"].tolist())],
            x_title="Text-only minus multimodal (points)",
        ),
        "table": Table(cols, rows, caption="Multimodal and text-only scores"),
        "summary": summary,
        "sentence": tax_sentence(summary),
    }


def groups(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Popularity buckets and egocentric vs not, per model and setting."""
    judge = tables.primary_judge
    names = model_names(tables)
    out = []
    for table, col, title, labeller in (
        ("by_popularity", "popularity", "Popularity", str),
        ("by_egocentric", "egocentric", "Egocentric", lambda v: "egocentric" if v else "other"),
    ):
        df = _primary(tables[table], judge)
        for setting in _settings(df):
            sub = df[df["setting"] == setting]
            values = list(dict.fromkeys(sub[col].tolist()))
            if col == "popularity":
                order = {"head": 0, "torso": 1, "tail": 2}
                values.sort(key=lambda v: order.get(str(v), 9))
            models = list(
                dict.fromkeys(
                    sub.sort_values("gamut", ascending=False)["submission_id"].astype(str)
                )
            )
            series, cols = [], [Column("model", "Model", numeric=False)]
            cells: dict[str, dict[str, Cell]] = {
                m: {"model": Cell(names.get(m, m), href=submission_href(m, root))} for m in models
            }
            for v in values:
                s = sub[sub[col] == v].set_index(sub[sub[col] == v]["submission_id"].astype(str))
                s = s.reindex(models)
                key = f"g{slug(str(v))}"
                cols.append(Column(key, f"{labeller(v)} [95% CI]", "ci"))
                for m in models:
                    cells[m][key] = Cell(s.at[m, "gamut"], s.at[m, "gamut_lo"], s.at[m, "gamut_hi"])
                series.append(
                    (
                        str(labeller(v)),
                        s["gamut"].tolist(),
                        s["gamut_lo"].tolist(),
                        s["gamut_hi"].tolist(),
                    )
                )
            out.append(
                {
                    "title": f"{title}: {setting_label(setting)}",
                    "table": Table(cols, [Row(cells[m]) for m in models]),
                    "figure": charts.dot_ci([names.get(m, m) for m in models], series),
                }
            )
    return {"sections": out}


__all__ = [
    "domain",
    "domains",
    "groups",
    "leaderboard",
    "model_names",
    "multimodal",
    "ordered_settings",
    "ranked_ids",
    "records",
    "setting_label",
    "submission_href",
    "tax_sentence",
]
