"""The judges page: per-judge scores, Kendall tau, leniency, self-preference and kappa (over all
checks and per check kind)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import pandas as pd

from generator import charts
from generator.audit import judge_vs_human
from generator.claims import judge_claims, rank_table
from generator.judging import judge_entries, judge_table
from generator.pages import model_names, submission_href
from generator.render import Cell, Column, Row, Table, setting_label
from generator.tables import ScoreTables
from scoring.numbers import f2, number
from scoring.tables import MIN_KIND_CHECKS


def _settings(df: pd.DataFrame) -> list[str]:
    return sorted({str(s) for s in df["setting"]}, key=lambda s: (s != "multimodal", s))


def _tau_matrix(tau: pd.DataFrame, judges: list[str]) -> list[list[float | None]]:
    lookup: dict[tuple[str, str], float] = {}
    for a, b, t in zip(tau["judge_a"], tau["judge_b"], tau["tau_b"], strict=True):
        lookup[(str(a), str(b))] = lookup[(str(b), str(a))] = float(t)
    return [[1.0 if a == b else lookup.get((a, b)) for b in judges] for a in judges]


def kind_label(kind: Any, secondary: Any) -> str:
    """A check kind in prose, by the names of the kind tables: ``member``, ``secondary member``."""
    return f"secondary {kind}" if bool(secondary) else str(kind)


def _kind_kappa(kp: pd.DataFrame) -> tuple[Table, str] | None:
    """One setting's kappa per check kind: a table with one row per (kind, secondary) and a kappa
    (with its interval) and a count column per judge pair, and the sentence naming the
    least-agreed kinds.

    None when there is no judge pair (a single judge).
    """
    if kp.empty:
        return None
    pairs = list(
        dict.fromkeys(zip(kp["judge_a"].astype(str), kp["judge_b"].astype(str), strict=True))
    )
    kinds = list(
        dict.fromkeys(zip(kp["kind"].astype(str), kp["secondary"].astype(bool), strict=True))
    )
    cols = [Column("kind", "Check kind", numeric=False), Column("secondary", "Secondary", "yes_no")]
    for i, (a, b) in enumerate(pairs):
        title = f"Cohen's kappa between {a} and {b} on this kind's checks, with its 95% interval"
        cols.append(Column(f"k{i}", f"{a} / {b} kappa", "f2_ci", title=title))
        cols.append(Column(f"n{i}", f"{a} / {b} checks", "integer"))
    cells: dict[tuple[str, bool], dict[str, Cell]] = {
        k: {"kind": Cell(k[0]), "secondary": Cell(k[1])}
        | {f"{c}{i}": Cell(None) for i in range(len(pairs)) for c in "kn"}
        for k in kinds
    }
    # each kind's least-agreeing pair: the lowest defined kappa, with its interval
    worst: dict[tuple[str, bool], Kappa] = {}
    for r in kp.to_dict(orient="records"):
        k, pair = (str(r["kind"]), bool(r["secondary"])), (str(r["judge_a"]), str(r["judge_b"]))
        i = pairs.index(pair)
        cells[k][f"k{i}"], cells[k][f"n{i}"] = Cell(*_ci(r, "kappa")), Cell(r["n_checks"])
        kappa = number(r["kappa"])
        if kappa is not None and (k not in worst or kappa < worst[k].kappa):
            worst[k] = Kappa(kind_label(*k), kappa, pair, r.get("kappa_lo"), r.get("kappa_hi"))
    table = Table(
        cols,
        [Row(cells[k]) for k in kinds],
        caption="Verdict agreement by check kind (Cohen's kappa per judge pair)",
    )
    return table, least_agreed_sentence([worst[k] for k in kinds if k in worst], len(pairs))


class Kappa(NamedTuple):
    """A check kind's lowest kappa over the judge pairs, for :func:`least_agreed_sentence`."""

    kind: str
    kappa: float
    pair: tuple[str, str]
    lo: Any = None
    hi: Any = None


def least_agreed_sentence(kinds: list[Kappa], n_pairs: int) -> str:
    """The sentence naming the check kinds the judges agree on least, worded by rule.

    Args:
        kinds: per kind with a defined kappa for some pair: its lowest kappa over the pairs,
            that pair and the kappa's interval. Kinds are ranked by that lowest kappa (ties in
            the given order), so every number the sentence prints is one of the table's.
        n_pairs: the number of judge pairs.
    """
    if not kinds:
        return (
            f"No check kind has a kappa: each has fewer than {MIN_KIND_CHECKS} checks judged by "
            "both judges of a pair, or a single verdict throughout."
        )
    ranked = sorted(kinds, key=lambda k: k.kappa)  # stable: ties keep the table's order

    def said(k: Kappa, first: bool) -> str:
        value = f"kappa {f2(k.kappa)}" if first else f2(k.kappa)
        if number(k.lo) is not None and number(k.hi) is not None:
            value += f" [{f2(k.lo)}, {f2(k.hi)}]"
        pair = f", {k.pair[0]} and {k.pair[1]}" if n_pairs > 1 else ""
        return f"{k.kind} checks ({value}{pair})"

    lead = (
        "Taking each kind's lowest kappa over the judge pairs, the judges"
        if n_pairs > 1
        else "The judges"
    )
    if len(ranked) == 1:
        only = said(ranked[0], True)
        return f"Only one kind has enough checks judged by two judges for a kappa: {only}."
    if len(ranked) == 2:
        return f"{lead} agree less on {said(ranked[0], True)} than on {said(ranked[1], False)}."
    top = ranked[-1]
    most = f"no pair below {f2(top.kappa)}" if n_pairs > 1 else f2(top.kappa)
    return (
        f"{lead} agree least on {said(ranked[0], True)} and {said(ranked[1], False)}, "
        f"and most on {top.kind} checks ({most})."
    )


def _score_table(
    sub: pd.DataFrame, primary: str, judges: list[str], names: dict[str, str], root: str
) -> tuple[list[Column], list[Row], list[str], list[tuple[str, list[Any], list[Any], list[Any]]]]:
    """One setting's scores by judge: the table (models by the primary judge's order), the
    models in that order and the chart's series."""
    prim = sub[sub["judge"] == primary].sort_values("gamut", ascending=False)
    models = [str(s) for s in prim["submission_id"]] or sorted(
        {str(s) for s in sub["submission_id"]}
    )
    cols = [Column("model", "Model", numeric=False)]
    cells: dict[str, dict[str, Cell]] = {
        m: {"model": Cell(names.get(m, m), href=submission_href(m, root))} for m in models
    }
    series = []
    for j in judges:
        mine = sub[sub["judge"] == j]
        s = mine.set_index(mine["submission_id"].astype(str)).reindex(models)
        cols += [Column(f"j_{j}", f"{j} [95% CI]", "ci"), Column(f"r_{j}", f"{j} rank", "integer")]
        for m in models:
            cells[m][f"j_{j}"] = Cell(s.at[m, "gamut"], s.at[m, "gamut_lo"], s.at[m, "gamut_hi"])
            cells[m][f"r_{j}"] = Cell(s.at[m, "rank"])
        series.append((j, s["gamut"].tolist(), s["gamut_lo"].tolist(), s["gamut_hi"].tolist()))
    return cols, [Row(cells[m]) for m in models], models, series


def _tau_table(tau: pd.DataFrame, names: dict[str, str]) -> Table:
    """One setting's Kendall tau-b and largest score difference per judge pair."""
    rows = [
        Row(
            {
                "a": Cell(r["judge_a"]),
                "b": Cell(r["judge_b"]),
                "tau": Cell(r["tau_b"]),
                "diff": Cell(r["max_abs_diff"]),
                "who": Cell(names.get(str(r["max_diff_submission"]), r["max_diff_submission"])),
            }
        )
        for r in tau.to_dict(orient="records")
    ]
    cols = [
        Column("a", "Judge A", numeric=False),
        Column("b", "Judge B", numeric=False),
        Column("tau", "Kendall tau-b", "f2"),
        Column("diff", "Largest score difference", "f1"),
        Column("who", "Model with the largest difference", numeric=False),
    ]
    return Table(cols, rows, caption="Agreement between judges' rankings")


def _preference_tables(len_df: pd.DataFrame, sp: pd.DataFrame) -> tuple[Table, Table]:
    """One setting's leniency and self-preference tables."""
    leniency = Table(
        [
            Column("judge", "Judge", numeric=False),
            Column("offset", "Offset vs primary [95% CI]", "signed_ci"),
        ],
        [
            Row({"judge": Cell(r["judge"]), "offset": Cell(*_ci(r, "offset"))})
            for r in len_df.to_dict(orient="records")
        ],
        caption="Leniency",
    )
    cols = [
        Column("judge", "Judge", numeric=False),
        Column("family", "Family", numeric=False),
        Column("own", "Own family's models", "f1"),
        Column("others", "Other judges on them", "f1", "The mean of every other judge's score"),
        Column("diff", "Difference", "signed"),
        Column("ofd", "Same difference, other families", "signed"),
        Column("sp", "Self-preference [95% CI]", "signed_ci", "Against every other judge"),
        Column("spp", "Against the primary alone [95% CI]", "signed_ci"),
    ]
    rows = [
        Row(
            {
                "judge": Cell(r["judge"]),
                "family": Cell(r["family"]),
                "own": Cell(r["own_score"]),
                "others": Cell(r["others_score_of_own"]),
                "diff": Cell(r["own_minus_others"]),
                "ofd": Cell(r.get("other_families_diff")),
                "sp": Cell(*_ci(r, "self_preference")),
                "spp": Cell(*_ci(r, "self_preference_primary")),
            }
        )
        for r in sp.to_dict(orient="records")
    ]
    return leniency, Table(cols, rows, caption="Self-preference")


def _ci(r: Mapping[Any, Any], name: str) -> tuple[Any, Any, Any]:
    """A record's figure and its interval (None where the table has no such column)."""
    return r.get(name), r.get(f"{name}_lo"), r.get(f"{name}_hi")


def _kappa_table(kp: pd.DataFrame) -> Table:
    """One setting's kappa and exact agreement per judge pair over every check, with intervals."""
    rows = [
        Row(
            {
                "a": Cell(r["judge_a"]),
                "b": Cell(r["judge_b"]),
                "kappa": Cell(*_ci(r, "kappa")),
                "agree": Cell(*_ci(r, "agreement")),
                "n": Cell(r["n_checks"]),
            }
        )
        for r in kp.to_dict(orient="records")
    ]
    cols = [
        Column("a", "Judge A", numeric=False),
        Column("b", "Judge B", numeric=False),
        Column("kappa", "Cohen's kappa [95% CI]", "f2_ci"),
        Column("agree", "Exact agreement [95% CI]", "pct_ci"),
        Column("n", "Checks compared", "integer"),
    ]
    return Table(cols, rows, caption="Verdict agreement over all checks (one kappa per judge pair)")


def _section(
    tables: ScoreTables, setting: str, judges: list[str], names: dict[str, str], root: str
) -> dict[str, Any]:
    """One setting's part of the judges page."""

    def rows(name: str) -> pd.DataFrame:
        df = tables[name]
        return df[df["setting"] == setting]

    label = setting_label(setting)
    cols, score_rows, models, series = _score_table(
        rows("judge_scores"), tables.primary_judge, judges, names, root
    )
    tau = rows("judge_tau")
    leniency, self_pref = _preference_tables(rows("judge_leniency"), rows("judge_self_preference"))
    by_kind = _kind_kappa(rows("judge_kappa_by_kind"))
    heat = charts.heatmap(
        judges, judges, _tau_matrix(tau, judges), x_title="Judge", y_title="Judge",
        z_title="Kendall tau-b", decimals=2, zrange=(-1.0, 1.0), cell=90,
    )  # fmt: skip
    return {
        "title": label,
        "scores": Table(cols, score_rows, caption=f"Scores by judge ({label})"),
        "figure": charts.dot_ci([names.get(m, m) for m in models], series),
        "tau_figure": heat,
        "tau": _tau_table(tau, names),
        "leniency": leniency,
        "self_pref": self_pref,
        "kappa": _kappa_table(rows("judge_kappa")),
        "kappa_kinds": by_kind[0] if by_kind else None,
        "least_agreed": by_kind[1] if by_kind else "",
        "claims": judge_claims(tables, setting, names),
        "ranks": rank_table(tables, setting, names),
    }


def judges_page(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Context of ``judges.md``.

    Args:
        tables: the :class:`~generator.tables.ScoreTables`.
        root: relative prefix from the page to the site root.
    """
    names = model_names(tables)
    js = tables["judge_scores"]
    judges = list(dict.fromkeys([tables.primary_judge, *sorted({str(j) for j in js["judge"]})]))
    info = judge_table(
        tables,
        judge_entries(tables),
        ("provider", "model", "prompt_link", "family", "primary"),
        "Judges",
    )
    return {
        "sections": [_section(tables, s, judges, names, root) for s in _settings(js)],
        "info": info,
        "n_judges": len(judges),
        "drift": drift_table(tables),
        "min_kind_checks": MIN_KIND_CHECKS,
        "audit": judge_vs_human(tables),
    }


def drift_table(tables: ScoreTables) -> Table | None:
    """The snapshot drift table, when some judge's provider changed its model snapshot."""
    df = tables.frames.get("judge_drift")
    if df is None or df.empty:
        return None
    rows = [
        Row(
            {
                "judge": Cell(r["judge"]),
                "old": Cell(r["old_snapshot"]),
                "new": Cell(r["new_snapshot"]),
                "n": Cell(r["n_pairs"]),
                "agree": Cell(r["agreement"]),
                "kappa": Cell(r["kappa"]),
                "diff": Cell(r["score_diff"]),
            }
        )
        for r in df.to_dict(orient="records")
    ]
    return Table(
        [
            Column("judge", "Judge", numeric=False),
            Column("old", "Earlier snapshot", numeric=False),
            Column("new", "New snapshot", numeric=False),
            Column("n", "Calibration pairs", "integer"),
            Column("agree", "Exact agreement", "pct"),
            Column("kappa", "Cohen's kappa", "f2"),
            Column("diff", "Score difference (new - earlier)", "signed"),
        ],
        rows,
        caption="Snapshot drift on the calibration pairs",
    )


__all__ = ["Kappa", "judges_page", "kind_label", "least_agreed_sentence"]
