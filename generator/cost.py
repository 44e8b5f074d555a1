"""The cost page and the model page's cost table: what judging each row cost, the model's own
tokens, and the score against judging cost and against response length.

The figures are the leaderboard's (``judge_cost_usd``, ``judge_tokens_*``, ``model_tokens_*``,
``mean_response_chars``); this module only chooses rows and says, in words, why a figure is not
known (replayed verdicts record no tokens: that is "not recorded", never $0).
"""

from __future__ import annotations

from typing import Any

from generator import charts
from generator.pages import Series, ordered_settings, ranked_ids, records
from generator.render import Cell, Column, Table, setting_label, table
from generator.tables import ScoreTables
from scoring.numbers import integer, number, pct, usd

NOT_RECORDED = "not recorded"


def judging_cost_text(r: dict[str, Any]) -> str:
    """A row's judging cost, or why it is not known."""
    cost, share = number(r.get("judge_cost_usd")), number(r.get("judge_tokens_recorded"))
    if cost is not None:
        return usd(cost)
    if share is None:
        return NOT_RECORDED
    if share == 0:
        return f"{NOT_RECORDED} (replayed verdicts)"
    if share < 1:
        return f"{NOT_RECORDED} for {pct(1 - share)} of verdicts"
    return "no prices configured"


def judge_tokens_text(r: dict[str, Any]) -> str:
    """A row's judging calls and tokens, or why they are not known."""
    t_in = number(r.get("judge_tokens_in"))
    if t_in is None:
        return NOT_RECORDED
    return (
        f"{integer(r.get('judge_calls'))} calls, {integer(t_in)} in "
        f"({integer(r.get('judge_tokens_cached'))} cached), "
        f"{integer(r.get('judge_tokens_out'))} out"
    )


def model_tokens_text(r: dict[str, Any]) -> str:
    """The model's own tokens of a row's responses, or how many responses record them."""
    t_in, share = number(r.get("model_tokens_in")), number(r.get("model_tokens_recorded"))
    if t_in is not None:
        return f"{integer(t_in)} in, {integer(r.get('model_tokens_out'))} out"
    if share is None or share == 0:
        return NOT_RECORDED
    return f"{NOT_RECORDED} for {pct(1 - share)} of responses"


_COST = [
    Column("model", "Model"),
    Column("setting", "Setting"),
    Column("judge", "Judge"),
    Column("gamut", "Gamut", "f1"),
    Column("cost", "Judging cost", "text", "USD at the judge's configured prices"),
    Column("judge_tokens", "Judge calls and tokens", "text"),
    Column("model_tokens", "Model tokens", "text", "As its provider reported them"),
    Column("chars", "Length", "integer", "Mean response length in characters",
           "mean_response_chars"),
]  # fmt: skip


def cost_table(rows: list[dict[str, Any]], names: dict[str, str] | None, caption: str) -> Table:
    """Per row: model (unless ``names`` is None: one model's page), setting, judge, score,
    judging cost, judging tokens, model tokens and length."""

    def cells(r: Any) -> dict[str, Cell]:
        sid = str(r["submission_id"])
        return {
            "model": Cell((names or {}).get(sid, sid)),
            "setting": Cell(setting_label(str(r["setting"]))),
            "gamut": Cell(r["gamut"] if r["status"] == "complete" else None),
            "cost": Cell(judging_cost_text(r)),
            "judge_tokens": Cell(judge_tokens_text(r)),
            "model_tokens": Cell(model_tokens_text(r)),
        }

    cols = _COST if names is not None else _COST[1:]
    return table(cols, rows, cells, caption)


def _why_no_cost(rows: list[dict[str, Any]], judge: str) -> str:
    shares = [number(r.get("judge_tokens_recorded")) for r in rows]
    if rows and all(s == 0 for s in shares):
        return (
            f"No judging cost is known: the primary judge {judge} replays stored verdicts (or "
            "gives them with the offline matcher), which are obtained by no call and record no "
            "tokens."
        )
    if rows and all(s == 1 for s in shares):
        return f"No judging cost is known: the primary judge {judge} has no prices configured."
    return (
        "No complete row has a judging cost: its verdicts record no tokens, or only some of "
        "them do, or the judge has no prices configured (the table says which)."
    )


def cost_page(tables: ScoreTables, names: dict[str, str]) -> dict[str, Any]:
    """Context of ``cost.md``: the primary judge's rows, score against judging cost and
    against response length (complete rows only), and every row's cost in a table."""
    judge = tables.primary_judge
    lb = tables["leaderboard"]
    prim = lb[lb["judge"] == judge]
    settings = ordered_settings(prim)
    order = {sid: i for i, sid in enumerate(ranked_ids(tables))}
    prim = prim.assign(
        _o=prim["submission_id"].astype(str).map(order),
        _s=prim["setting"].astype(str).map({s: i for i, s in enumerate(settings)}),
    ).sort_values(["_s", "_o"])
    rows = records(prim.drop(columns=["_o", "_s"]))
    complete = [r for r in rows if r["status"] == "complete"]

    def series(x: str) -> list[Series]:
        out = []
        for s in settings:
            mine = [r for r in complete if r["setting"] == s and number(r[x]) is not None]
            sids = [str(r["submission_id"]) for r in mine]
            out.append((setting_label(s), [r[x] for r in mine], [r["gamut"] for r in mine],
                        [names.get(sid, sid) for sid in sids]))  # fmt: skip
        return out

    out: dict[str, Any] = {"judge": judge}
    for key, column, x_title, x_format in (
        ("cost", "judge_cost_usd", "Judging cost (USD, primary judge)", "$,.4f"),
        ("length", "mean_response_chars", "Mean response length (characters)", ",.0f"),
        ("model", "model_tokens_out", "Model output tokens (as reported)", ",.0f"),
    ):
        points = series(column)
        out[f"n_{key}"] = n = sum(len(s[1]) for s in points)
        out[f"{key}_figure"] = (
            charts.scatter(points, x_title=x_title, x_format=x_format) if n else None
        )
    return out | {
        "no_cost": "" if out["n_cost"] else _why_no_cost(complete, judge),
        "no_length": ""
        if out["n_length"]
        else "No complete row has responses whose length is known.",
        "no_model": ""
        if out["n_model"]
        else "No model's responses record their token counts: gamut generate writes them when "
        "the model's provider reports usage, and a response file may carry them (its lines' "
        "optional usage).",
        "table": cost_table(rows, names, caption="Judging cost, tokens and length by row"),
        "n_model_tokens": sum(1 for r in rows if number(r.get("model_tokens_in")) is not None),
    }
