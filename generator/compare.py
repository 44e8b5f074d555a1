"""Comparing models: the compare page's data (each model's question scores per setting, and the
``pairwise`` table's paired differences) and the significance matrix over every pair, marked by
the table's Holm-adjusted significance (one family: the primary judge's pairs in every setting).

The differences, intervals and question counts come from the ``pairwise`` score table; nothing is
computed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from generator.explorer import DATA, data_script, points
from generator.render import Cell, Column, Row, Table, human, setting_label
from generator.tables import ScoreTables
from scoring.storage import atomic_write_text

COMPARE = "compare"


def _ordered(tables: ScoreTables, setting: str) -> list[str]:
    """Complete models of the primary judge in ``setting``, best rank first."""
    lb = tables["leaderboard"]
    lb = lb[(lb["judge"] == tables.primary_judge) & (lb["setting"] == setting)]
    lb = lb[lb["status"] == "complete"].sort_values(["rank", "submission_id"])
    return [str(s) for s in lb["submission_id"]]


def write_compare_data(tables: ScoreTables, site: Path, settings: list[str]) -> dict[str, str]:
    """Per setting, one file with every complete model's question scores (primary judge);
    returns setting -> the data file, relative to the site root."""
    qs = tables["question_scores"]
    qs = qs[qs["judge"].astype(str) == tables.primary_judge]
    out = {}
    for setting in settings:
        sub = qs[qs["setting"].astype(str) == setting]
        piv = sub.pivot_table(index="question_id", columns="submission_id", values="gamut_raw",
                              aggfunc="first", observed=True)  # fmt: skip
        models = [m for m in _ordered(tables, setting) if m in piv.columns]
        domains = sub.drop_duplicates("question_id").set_index("question_id")["domain"]
        data = {
            "setting": setting,
            "questions": [str(q) for q in piv.index],
            "domains": [human(str(domains[q])) for q in piv.index],
            "scores": {m: [points(x) for x in piv[m]] for m in models},
        }
        rel = f"{COMPARE}/{setting}.js"
        (site / COMPARE).mkdir(parents=True, exist_ok=True)
        atomic_write_text(site / rel, data_script(data))
        out[setting] = rel
    return out


def _pairs(tables: ScoreTables) -> pd.DataFrame:
    pw = tables["pairwise"]
    return pw[pw["judge"].astype(str) == tables.primary_judge]


def pair_records(tables: ScoreTables) -> list[dict[str, Any]]:
    """The primary judge's pairwise rows, for the compare page's script."""
    return [
        {
            "s": str(r["setting"]),
            "a": str(r["submission_a"]),
            "b": str(r["submission_b"]),
            "diff": round(float(r["diff"]), 3),
            "lo": round(float(r["diff_lo"]), 3),
            "hi": round(float(r["diff_hi"]), 3),
            "sig": bool(r["significant"]),
            "p": float(r["p_adjusted"]),
            "n": int(r["n_questions"]),
            "a_higher": int(r["n_a_higher"]),
            "b_higher": int(r["n_b_higher"]),
            "equal": int(r["n_equal"]),
        }
        for r in _pairs(tables).to_dict(orient="records")
    ]


def significance_matrix(
    tables: ScoreTables, setting: str, names: dict[str, str], root: str = ""
) -> Table:
    """Rows and columns are the models by rank; a cell is row minus column with its interval,
    marked when the interval excludes zero, and links to the pair's comparison."""
    models = _ordered(tables, setting)
    pw = _pairs(tables)
    pw = pw[pw["setting"].astype(str) == setting]
    lookup: dict[tuple[str, str], dict[str, Any]] = {
        (str(r["submission_a"]), str(r["submission_b"])): {str(k): v for k, v in r.items()}
        for r in pw.to_dict(orient="records")
    }
    cols = [Column("model", "Model (row minus column)")]
    cols += [Column(f"m{i}", f"#{i + 1} {names.get(m, m)}", "pair") for i, m in enumerate(models)]
    rows = []
    for a in models:
        cells = {"model": Cell(names.get(a, a))}
        for i, b in enumerate(models):
            r = lookup.get((a, b))
            if r is None:
                cells[f"m{i}"] = Cell(None)
                continue
            sign = "higher" if r["diff"] > 0 else "lower"
            verdict = sign if r["significant"] else "tie"  # Holm-adjusted, not the interval
            href = f"{root}compare.html?setting={setting}&a={a}&b={b}"
            cells[f"m{i}"] = Cell(r["diff"], r["diff_lo"], r["diff_hi"], href, verdict)
        rows.append(Row(cells))
    caption = f"Pairwise differences ({setting_label(setting)})"
    return Table(cols, rows, caption, f"matrix-{setting}", sortable=False)


def compare_page(
    tables: ScoreTables, names: dict[str, str], settings: list[str], data: dict[str, str]
) -> dict[str, Any]:
    """Context of ``compare.md``."""
    models = {s: [{"id": m, "name": names.get(m, m)} for m in _ordered(tables, s)]
              for s in settings}  # fmt: skip
    family = len(_pairs(tables)) // 2  # Holm's family: every unordered pair of every setting
    return {
        "family": family,
        "settings": [(s, setting_label(s)) for s in settings],
        "config": {
            "models": models,
            "data": data,
            "pairs": pair_records(tables),
            "explorer": "explorer.html",
            "qdata": DATA,
            "family": family,
        },
        "matrices": [(setting_label(s), significance_matrix(tables, s, names)) for s in settings],
        "resamples": tables.provenance.get("scoring", {}).get("bootstrap_resamples"),
    }
