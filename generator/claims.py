"""The paper's judge claims as sentences computed from the score tables (the judges page).

Each sentence is worded by rule from one setting's ``judge_tau``, ``judge_scores``,
``judge_self_preference``, ``judge_leniency`` and ``rank_sensitivity`` rows, so that it says
what this leaderboard's data shows, whichever way that goes: whether two judges rank the models
identically, the largest per-model score difference between them, each judge's self-scoring gap,
the most lenient judge's range, and whether only adjacent swaps occur between any two judges
among the models complete under every judge (those left out are named).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from scoring.numbers import f2


def _f1(x: float) -> str:
    return f"{x:.1f}"


def _pairs(tau: pd.DataFrame, names: dict[str, str]) -> list[str]:
    out = []
    for _, r in tau.iterrows():
        a, b = str(r["judge_a"]), str(r["judge_b"])
        t = r.get("tau_b")
        if t is None or pd.isna(t):
            continue
        order = (
            f"Judges {a} and {b} give identical rankings"
            if float(t) >= 1.0 - 1e-12
            else f"Judges {a} and {b} rank the models differently (Kendall tau-b {f2(t)})"
        )
        diff = r.get("max_abs_diff")
        if diff is None or pd.isna(diff) or "max_diff_submission" not in r:
            out.append(order + ".")
            continue
        model = names.get(str(r["max_diff_submission"]), str(r["max_diff_submission"]))
        out.append(
            f"{order}; the largest per-model score difference between them is "
            f"{_f1(float(diff))} points ({model})."
        )
    return out


def _self(sp: pd.DataFrame) -> list[str]:
    out = []
    for _, r in sp.iterrows():
        gap_value = r.get("own_minus_others")
        if not r.get("n_own", 1) or gap_value is None or pd.isna(gap_value):
            continue
        gap = float(gap_value)
        way = "higher" if gap > 0 else "lower"
        out.append(
            f"{r['judge']} scores its own family's models ({r.get('family', 'its family')}) "
            f"{_f1(abs(gap))} points {way} than the other judges score them"
            + (" (the same)." if abs(gap) < 0.05 else ".")
        )
    return out


def _lenient(js: pd.DataFrame, leniency: pd.DataFrame, primary: str) -> list[str]:
    if "offset" not in leniency or "gamut" not in js:
        return []
    others = leniency[(leniency["judge"] != primary) & leniency["offset"].notna()]
    if others.empty:
        return []
    top = others.sort_values("offset", kind="stable").iloc[-1]
    name = str(top["judge"])
    wide = js.pivot_table(index="submission_id", columns="judge", values="gamut", observed=True)
    if name not in wide or primary not in wide:
        return []
    d = (wide[name] - wide[primary]).dropna()
    if d.empty:
        return []
    lo, hi = float(d.min()), float(d.max())
    if lo > 0:
        return [
            f"The most lenient judge, {name}, scores every model higher than the primary judge "
            f"{primary}, by {_f1(lo)} to {_f1(hi)} points."
        ]
    return [
        f"The most lenient judge, {name}, scores the models from {_f1(lo)} to {_f1(hi)} points "
        f"relative to the primary judge {primary}: not uniformly higher."
    ]


def _swaps(rs: pd.DataFrame | None, names: dict[str, str]) -> list[str]:
    """Whether only adjacent swaps occur, over every pair of judges, among the models complete
    under every judge; the models left out are named."""
    if rs is None or rs.empty or "max_rank_change" not in rs:
        return []
    out = []
    left = rs[~rs["compared"].astype(bool)] if "compared" in rs else rs.iloc[:0]
    left_out = sorted({names.get(str(s), str(s)) for s in left["submission_id"]})
    if left_out:
        out.append(
            "Ranks are compared among the models complete under every judge; left out: "
            + ", ".join(left_out)
            + "."
        )
    moved = rs.dropna(subset=["max_rank_change"])
    if moved.empty:
        return out
    largest = int(moved["max_rank_change"].max())
    if largest == 0:
        return [*out, "Every judge ranks these models in the same order."]
    if largest == 1:
        return [*out, "Only adjacent swaps occur: no model moves more than one place between "
                "any two judges."]  # fmt: skip
    worst = moved.sort_values("max_rank_change", ascending=False, kind="stable").iloc[0]
    model = names.get(str(worst["submission_id"]), str(worst["submission_id"]))
    ranks = rs[rs["submission_id"] == worst["submission_id"]].dropna(subset=["rank"])
    top, bottom = ranks.loc[ranks["rank"].idxmin()], ranks.loc[ranks["rank"].idxmax()]
    return [
        *out,
        f"Not only adjacent swaps: {model} is ranked {int(top['rank'])} by {top['judge']} and "
        f"{int(bottom['rank'])} by {bottom['judge']}, {largest} places apart.",
    ]


def judge_claims(tables: Any, setting: str, names: dict[str, str]) -> list[str]:
    """The claim sentences of one setting (empty when there is a single judge).

    Args:
        tables: the :class:`~generator.tables.ScoreTables`.
        setting: ``multimodal`` or ``text_only``.
        names: submission id -> model name.
    """

    def rows(name: str) -> pd.DataFrame | None:
        df = tables.frames.get(name)
        return None if df is None else df[df["setting"] == setting]

    tau = rows("judge_tau")
    if tau is None or tau.empty:
        return []
    out = _pairs(tau, names)
    sp = rows("judge_self_preference")
    if sp is not None:
        out += _self(sp)
    js, leniency = rows("judge_scores"), rows("judge_leniency")
    if js is not None and leniency is not None:
        out += _lenient(js, leniency, tables.primary_judge)
    out += _swaps(rows("rank_sensitivity"), names)
    return out


def _int(x: Any) -> int | None:
    return None if x is None or pd.isna(x) else int(x)


def rank_table(tables: Any, setting: str, names: dict[str, str]) -> Any:
    """Each model's rank under every judge beside the primary judge's, with its largest change
    (a :class:`~generator.render.Table`), or None without ``rank_sensitivity``."""
    from generator.render import Cell, Column, Row, Table

    rs = tables.frames.get("rank_sensitivity")
    if rs is None:
        return None
    rs = rs[rs["setting"] == setting]
    if rs.empty:
        return None
    judges = list(dict.fromkeys([tables.primary_judge, *sorted({str(j) for j in rs["judge"]})]))
    rows = []
    for sid, part in rs.groupby("submission_id", sort=False, observed=True):
        by = part.set_index("judge")
        cells = {"model": Cell(names.get(str(sid), str(sid)))}
        for j in judges:
            cells[f"j_{j}"] = Cell(_int(by["rank"].get(j)))
        cells["max"] = Cell(_int(part["max_rank_change"].iloc[0]))
        rows.append((by["primary_rank"].iloc[0], Row(cells)))
    rows.sort(key=lambda x: x[0])
    return Table(
        [
            Column("model", "Model", numeric=False),
            *(Column(f"j_{j}", f"Rank by {j}", "integer") for j in judges),
            Column("max", "Largest change", "integer", "Largest rank gap, any two judges"),
        ],
        [r for _, r in rows],
        caption="Rank under each judge (the primary judge first)",
    )


__all__ = ["judge_claims", "rank_table"]
