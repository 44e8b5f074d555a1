"""The paper's judge claims as sentences on the judges page, each worded by rule from one
setting's judge tables so that it says what this leaderboard's data shows, whichever way that
goes. The words follow the figures as printed (:func:`scoring.numbers.compared`), each with its
interval where the tables have one.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from scoring.numbers import compared, f1, f2, number, rounded, signed, with_ci


def _pairs(tau: pd.DataFrame, names: dict[str, str]) -> list[str]:
    out = []
    for _, r in tau.iterrows():
        a, b = str(r["judge_a"]), str(r["judge_b"])
        t = r.get("tau_b")
        if t is None or pd.isna(t):
            continue
        order = (
            f"Judges {a} and {b} give identical rankings"
            if f2(t) == "1.00"
            else f"Judges {a} and {b} rank the models differently (Kendall tau-b {f2(t)})"
        )
        diff = rounded(r.get("max_abs_diff"))
        if diff is None or "max_diff_submission" not in r:
            out.append(order + ".")
        elif diff == 0:
            out.append(f"{order}; they give every model the same score at this precision.")
        else:
            model = names.get(str(r["max_diff_submission"]), str(r["max_diff_submission"]))
            out.append(
                f"{order}; the largest per-model score difference between them is "
                f"{f1(diff)} points ({model})."
            )
    return out


def _self(sp: pd.DataFrame, primary: str) -> list[str]:
    """Each judge's gap on its own family's models, and its self-preference (net of the same gap
    on other families) with its interval; the primary judge's alone beside it when it prints
    differently."""
    out = []
    for _, r in sp.iterrows():
        gap = r.get("own_minus_others")
        if not r.get("n_own", 1) or gap is None or pd.isna(gap):
            continue
        said = compared(gap, "the other judges score them")
        text = (
            f"{r['judge']} scores its own family's models ({r.get('family', 'its family')}) {said}"
        )
        pref = with_ci(r.get("self_preference"), *_bounds(r, "self_preference"), sign=True)
        if number(r.get("self_preference")) is not None:
            text += f"; net of the same difference on other families, its self-preference is {pref}"
        alone = r.get("self_preference_primary")
        if number(alone) is not None and signed(alone) != signed(r.get("self_preference")):
            shown = with_ci(alone, *_bounds(r, "self_preference_primary"), sign=True)
            text += f" ({shown} against the primary judge {primary} alone)"
        out.append(text + ".")
    return out


def _bounds(r: Any, name: str) -> tuple[Any, Any]:
    return r.get(f"{name}_lo"), r.get(f"{name}_hi")


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
    lo, hi = rounded(d.min()) or 0.0, rounded(d.max()) or 0.0
    than = f"the primary judge {primary}"
    mean = compared(top["offset"], than, lo=top.get("offset_lo"), hi=top.get("offset_hi"))
    lead = f"The most lenient judge, {name}, scores the models, on average, {mean}"
    if lo > 0:
        each = f"by {f1(lo)} points" if lo == hi else f"by {f1(lo)} to {f1(hi)} points"
        return [f"{lead}; it scores every model higher, {each}."]
    if lo == hi == 0:
        return [f"{lead}; it gives every model the same score at this precision."]
    return [f"{lead}; per model from {signed(lo)} to {signed(hi)} points: not uniformly higher."]


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
    """The claim sentences of one setting (empty when there is a single judge)."""

    def rows(name: str) -> pd.DataFrame | None:
        df = tables.frames.get(name)
        return None if df is None else df[df["setting"] == setting]

    tau = rows("judge_tau")
    if tau is None or tau.empty:
        return []
    out = _pairs(tau, names)
    sp = rows("judge_self_preference")
    if sp is not None:
        out += _self(sp, tables.primary_judge)
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
            Column("model", "Model"),
            *(Column(f"j_{j}", f"Rank by {j}", "integer") for j in judges),
            Column("max", "Largest change", "integer", "Largest rank gap, any two judges"),
        ],
        [r for _, r in rows],
        caption="Rank under each judge (the primary judge first)",
    )
