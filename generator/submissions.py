"""One page per submission: metadata, tier scores, domains, verdict mix by check kind, how the
responses were produced, and links to its verdict files."""

from __future__ import annotations

from typing import Any

import pandas as pd

from generator import charts
from generator.cost import cost_table
from generator.explorer import points
from generator.inputs import SiteInputs
from generator.pages import records
from generator.render import Cell, Column, Row, Table, excerpt, human, setting_label, slug
from generator.stamps import STAMP_COLUMN, STAMP_LEGEND, is_stale, stamp_cell, stamp_detail
from generator.tables import ScoreTables
from scoring.questions import Setting

#: Optional leaderboard columns describing how responses were produced (shown when present).
PRODUCTION_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("decoding", "Decoding", "text"),
    ("tools", "Tools", "yes_no"),
    ("web_access", "Web access", "yes_no"),
    ("system_prompt", "System prompt", "text"),
    ("notes", "Notes", "text"),
)


def _production(row: dict[str, Any]) -> list[tuple[str, str, Any]]:
    out = []
    for key, label, fmt in PRODUCTION_FIELDS:
        for col in (f"production_{key}", key):
            if (
                col in row
                and row[col] is not None
                and not (isinstance(row[col], float) and pd.isna(row[col]))
            ):
                out.append((label, fmt, row[col]))
                break
    return out


#: The declared training-data overlap (submission.yaml ``training_data``, leaderboard columns).
TRAINING_FIELDS: tuple[tuple[str, str], ...] = (
    ("contamination", "Contamination"),
    ("training_datasets", "Training data that may overlap"),
    ("training_notes", "Notes"),
)


def training_data(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of the training data a submission declared; empty when it declared none."""
    out = []
    for col, label in TRAINING_FIELDS:
        value = row.get(col)
        if value is None or (not isinstance(value, str) and bool(pd.isna(value))) or value == "":
            continue
        out.append((label, str(value).replace("_", " ") if col == "contamination" else str(value)))
    return out


def submission_page(
    tables: ScoreTables, submission_id: str, downloads: dict[str, str], root: str = "../"
) -> dict[str, Any]:
    """Context of ``submissions/<id>.md``.

    Args:
        tables: the :class:`~generator.tables.ScoreTables`.
        submission_id: the submission.
        downloads: label -> path (from the site root) of this submission's verdict files.
        root: relative prefix from the page to the site root.
    """
    judge = tables.primary_judge
    lb = tables["leaderboard"]
    mine = lb[lb["submission_id"] == submission_id]
    prim = mine[mine["judge"] == judge]
    meta = dict(prim.iloc[0]) if len(prim) else dict(mine.iloc[0])
    by_judge = mine.sort_values(
        ["judge", "setting"],
        key=lambda s: s.map(lambda v: (v != judge, v != "multimodal", str(v))),
    )
    ordered = records(by_judge)
    bd = tables["by_domain"]
    domains, figure = _domain_table(bd[(bd["submission_id"] == submission_id)
                                       & (bd["judge"] == judge)], root)  # fmt: skip
    bk = tables["by_kind"]
    return {
        "submission_id": submission_id,
        "meta": meta,
        "production": _production(meta),
        "training": training_data(meta),
        "tiers": _tier_table(ordered),
        "domains": domains,
        "domain_figure": figure,
        "kinds": _kind_table(bk[(bk["submission_id"] == submission_id) & (bk["judge"] == judge)]),
        "cost": cost_table(
            ordered,
            None,
            caption="Judging cost, tokens and length by setting and judge",
        ),
        "stale": [
            (setting_label(str(r["setting"])), str(r["judge"]), str(r["stale_reason"]))
            for r in records(mine)
            if is_stale(r)
        ],
        "stamp": stamp_detail(meta),
        "stamp_legend": STAMP_LEGEND,
        "downloads": [(label, root + path) for label, path in downloads.items()],
        "judge": judge,
    }


def _tier_table(ordered: list[dict[Any, Any]]) -> Table:
    """Scores by setting and judge."""
    rows = [
        Row(
            {
                "setting": Cell(setting_label(str(r["setting"]))),
                "judge": Cell(r["judge"]),
                "gamut": Cell(r["gamut"], r["gamut_lo"], r["gamut_hi"]),
                "ac": Cell(r["ac"]),
                "v": Cell(r["v"]),
                "c": Cell(r["c"]),
                "rank": Cell(r["rank"], r["rank_lo"], r["rank_hi"]),
                "status": Cell(r["status"]),
                "stamp": stamp_cell(r),
            }
        )
        for r in ordered
    ]
    cols = [
        Column("setting", "Setting", numeric=False),
        Column("judge", "Judge", numeric=False),
        Column("gamut", "Gamut [95% CI]", "ci"),
        Column("ac", "AC", "f1"),
        Column("v", "V", "f1"),
        Column("c", "C", "f1"),
        Column("rank", "Rank", "rank"),
        Column("status", "Status", numeric=False),
        STAMP_COLUMN,
    ]
    return Table(cols, rows, caption="Scores by setting and judge")


def _domain_table(bd: pd.DataFrame, root: str) -> tuple[Table, Any]:
    """Scores by domain (the submission's primary-judge rows), as a table and a chart."""
    doms = sorted({str(d) for d in bd["domain"]})
    settings = sorted({str(s) for s in bd["setting"]}, key=lambda s: (s != "multimodal", s))
    dcols = [Column("domain", "Domain", numeric=False)]
    dcells = {d: {"domain": Cell(human(d), href=f"{root}domains/{slug(d)}.html")} for d in doms}
    series = []
    for s in settings:
        sub = bd[bd["setting"] == s].set_index(bd[bd["setting"] == s]["domain"].astype(str))
        sub = sub.reindex(doms)
        dcols.append(Column(f"g_{s}", f"{setting_label(s)} [95% CI]", "ci"))
        for d in doms:
            dcells[d][f"g_{s}"] = Cell(
                sub.at[d, "gamut"], sub.at[d, "gamut_lo"], sub.at[d, "gamut_hi"]
            )
        series.append((setting_label(s), sub["gamut"].tolist(), sub["gamut_lo"].tolist(),
                       sub["gamut_hi"].tolist()))  # fmt: skip
    table = Table(dcols, [Row(dcells[d]) for d in doms], caption="Scores by domain")
    figure = charts.dot_ci([human(d) for d in doms], series, y_title="Domain") if doms else None
    return table, figure


def _kind_table(bk: pd.DataFrame) -> Table:
    """The verdict mix by check kind (the submission's primary-judge rows)."""
    bk = bk.sort_values(
        ["setting", "kind", "secondary"], key=lambda s: s.map(lambda v: (v != "multimodal", str(v)))
    )
    rows = [
        Row(
            {
                "setting": Cell(setting_label(str(r["setting"]))),
                "kind": Cell(r["kind"]),
                "secondary": Cell(bool(r["secondary"])),
                "n": Cell(r["n_checks"]),
                "meets": Cell(r["share_meets"]),
                "partial": Cell(r["share_partial"]),
                "missing": Cell(r["share_missing"]),
                "contra": Cell(r["share_contradicts"]),
                "score": Cell(r["score"]),
            }
        )
        for r in records(bk)
    ]
    cols = [
        Column("setting", "Setting", numeric=False),
        Column("kind", "Check kind", numeric=False),
        Column("secondary", "Secondary", "yes_no"),
        Column("n", "Checks", "integer"),
        Column("meets", "Meets", "pct"),
        Column("partial", "Partially", "pct"),
        Column("missing", "Missing", "pct"),
        Column("contra", "Contradicts", "pct"),
        Column("score", "Pooled score", "f1"),
    ]
    return Table(cols, rows, caption="Verdict mix by check kind (primary judge)")


def _explorer_href(root: str, question_id: str, submission_id: str, setting: str) -> str:
    return f"{root}explorer.html?question={question_id}&model={submission_id}&setting={setting}"


def highlights(
    tables: ScoreTables, inputs: SiteInputs, submission_id: str, root: str = "../", n: int = 5
) -> dict[str, Any]:
    """The model's best and worst questions per setting (primary judge), with links into the
    explorer, and example responses: its best, middle and worst question of the first setting."""
    qs = tables["question_scores"]
    qs = qs[(qs["submission_id"] == submission_id) & (qs["judge"] == tables.primary_judge)]
    text = {q.question_id: q for q in inputs.questions}
    sections: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    for setting in sorted({str(s) for s in qs["setting"]}, key=lambda s: (s != "multimodal", s)):
        sub = qs[qs["setting"] == setting].sort_values(
            ["gamut_raw", "question_id"], ascending=[False, True]
        )
        # only the rows shown: the n best, the n worst and the middle one
        shown = sorted({*range(min(n, len(sub))), *range(max(0, len(sub) - n), len(sub))}
                       | ({len(sub) // 2} if len(sub) else set()))  # fmt: skip
        at = dict(zip(shown, records(sub.iloc[shown]), strict=True))
        recs = [at[i] for i in range(len(sub)) if i in at]

        def link(r: dict[str, Any], setting: str = setting) -> dict[str, Any]:
            qid = str(r["question_id"])
            q = text.get(qid)
            return {
                "href": _explorer_href(root, qid, submission_id, setting),
                "question_id": qid,
                "question": excerpt(q.prompt(Setting(setting)) if q else qid, 160),
                "domain": human(r["domain"]),
                "gamut": points(r["gamut_raw"]),
            }

        best, worst = recs[:n], recs[::-1][:n]
        sections.append(
            {
                "title": setting_label(setting),
                "best": [link(r) for r in best],
                "worst": [link(r) for r in worst],
            }
        )
        if not examples and recs:
            responses = inputs.responses.get((submission_id, setting), {})
            picks = {"Best": at[0], "Middle": at[len(sub) // 2], "Worst": at[len(sub) - 1]}
            for label, r in picks.items():
                item = link(r)
                item["label"] = f"{label} question ({setting_label(setting)})"
                item["response"] = excerpt(responses.get(str(r["question_id"])), 700)
                examples.append(item)
    return {"sections": sections, "examples": examples}


__all__ = ["PRODUCTION_FIELDS", "highlights", "submission_page"]
