"""One page per submission: metadata, tier scores, domains, verdict mix by check kind, how the
responses were produced, and links to its verdict files."""

from __future__ import annotations

from typing import Any

import pandas as pd

from generator import charts
from generator.cost import cost_table
from generator.explorer import points
from generator.inputs import SiteInputs
from generator.pages import ordered_settings, records, spread
from generator.render import Cell, Column, Row, Table, excerpt, human, setting_label, slug, table
from generator.stamps import STAMP_COLUMN, STAMP_LEGEND, is_stale, stamp_cell, stamp_detail, text
from generator.tables import ScoreTables
from scoring.questions import Setting

#: Optional leaderboard columns describing how responses were produced (shown when present).
PRODUCTION_FIELDS = (
    ("decoding", "Decoding", "text"),
    ("tools", "Tools", "yes_no"),
    ("web_access", "Web access", "yes_no"),
    ("system_prompt", "System prompt", "text"),
    ("notes", "Notes", "text"),
)
#: The declared training-data overlap (submission.yaml ``training_data``, leaderboard columns).
TRAINING_FIELDS = (
    ("contamination", "Contamination"),
    ("training_datasets", "Training data that may overlap"),
    ("training_notes", "Notes"),
)


def _production(row: dict[str, Any]) -> list[tuple[str, str, Any]]:
    out = []
    for key, label, fmt in PRODUCTION_FIELDS:
        given = [row[c] for c in (f"production_{key}", key) if text(row.get(c))]
        out += [(label, fmt, given[0])] if given else []
    return out


def training_data(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of the training data a submission declared; empty when it declared none."""
    return [
        (label, str(row[col]).replace("_", " ") if col == "contamination" else str(row[col]))
        for col, label in TRAINING_FIELDS
        if text(row.get(col))
    ]


def submission_page(
    tables: ScoreTables, submission_id: str, downloads: dict[str, str], root: str = "../"
) -> dict[str, Any]:
    """Context of ``submissions/<id>.md``; ``downloads``: label -> path (from the site root) of
    its verdict files; ``root``: the relative prefix from the page to the site root."""
    judge = tables.primary_judge

    def primary(name: str) -> pd.DataFrame:
        return tables.primary_rows(name, submission_id)

    lb = tables["leaderboard"]
    mine = lb[lb["submission_id"] == submission_id]
    prim = primary("leaderboard")
    meta = dict(prim.iloc[0]) if len(prim) else dict(mine.iloc[0])
    by_judge = mine.sort_values(
        ["judge", "setting"],
        key=lambda s: s.map(lambda v: (v != judge, v != "multimodal", str(v))),
    )
    ordered = records(by_judge)
    domains, figure = _domain_table(primary("by_domain"), root)
    return {
        "submission_id": submission_id,
        "meta": meta,
        "production": _production(meta),
        "training": training_data(meta),
        "tiers": table(_TIERS, ordered, _cells, "Scores by setting and judge"),
        "domains": domains,
        "domain_figure": figure,
        "kinds": _kind_table(primary("by_kind")),
        "cost": cost_table(ordered, None, "Judging cost, tokens and length by setting and judge"),
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


_TIERS = [
    Column("setting", "Setting"),
    Column("judge", "Judge"),
    Column("gamut", "Gamut [95% CI]", "ci"),
    Column("ac", "AC", "f1"),
    Column("v", "V", "f1"),
    Column("c", "C", "f1"),
    Column("rank", "Rank", "rank"),
    Column("status", "Status"),
    STAMP_COLUMN,
]
_KINDS = [
    Column("setting", "Setting"),
    Column("kind", "Check kind"),
    Column("secondary", "Secondary", "yes_no"),
    Column("n", "Checks", "integer", src="n_checks"),
    Column("meets", "Meets", "pct", src="share_meets"),
    Column("partial", "Partially", "pct", src="share_partial"),
    Column("missing", "Missing", "pct", src="share_missing"),
    Column("contra", "Contradicts", "pct", src="share_contradicts"),
    Column("score", "Pooled score", "f1"),
]


def _cells(r: Any) -> dict[str, Cell]:
    """The cells of a tier or kind row that are not the record's values (a table shows those of
    its columns)."""
    return {
        "setting": Cell(setting_label(str(r["setting"]))),
        "stamp": stamp_cell(r),
        "secondary": Cell(bool(r.get("secondary"))),
    }


def _domain_table(bd: pd.DataFrame, root: str) -> tuple[Table, Any]:
    """Scores by domain (the submission's primary-judge rows), as a table and a chart."""
    doms = sorted({str(d) for d in bd["domain"]})
    settings = ordered_settings(bd)
    cols, cells, series = spread(bd, "domain", doms, "setting", settings, setting_label)
    first = {d: {"domain": Cell(human(d), href=f"{root}domains/{slug(d)}.html")} for d in doms}
    by_domain = Table([Column("domain", "Domain"), *cols],
                      [Row(first[d] | cells[d]) for d in doms], "Scores by domain")  # fmt: skip
    figure = charts.dot_ci([human(d) for d in doms], series, y_title="Domain") if doms else None
    return by_domain, figure


def _kind_table(bk: pd.DataFrame) -> Table:
    """The verdict mix by check kind (the submission's primary-judge rows)."""
    bk = bk.sort_values(
        ["setting", "kind", "secondary"], key=lambda s: s.map(lambda v: (v != "multimodal", str(v)))
    )
    return table(_KINDS, records(bk), _cells, "Verdict mix by check kind (primary judge)")


def highlights(
    tables: ScoreTables, inputs: SiteInputs, submission_id: str, root: str = "../", n: int = 5
) -> dict[str, Any]:
    """The model's best and worst questions per setting (primary judge), with links into the
    explorer, and example responses: its best, middle and worst question of the first setting."""
    qs = tables.primary_rows("question_scores", submission_id)
    text = {q.question_id: q for q in inputs.questions}
    sections: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    for setting in ordered_settings(qs):
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
            at_model = f"model={submission_id}&setting={setting}"
            return {
                "href": f"{root}explorer.html?question={qid}&{at_model}",
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
