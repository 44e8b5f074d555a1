"""The judges page: per-judge scores, Kendall tau, leniency, self-preference and kappa (over all
checks and per check kind)."""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from generator import charts
from generator.audit import judge_vs_human
from generator.claims import judge_claims, rank_table
from generator.judging import judge_entries, judge_table
from generator.pages import model_cells, model_names, ordered_settings, records, spread
from generator.render import Cell, Column, Row, Table, setting_label, table
from generator.tables import ScoreTables
from scoring.numbers import f2, number
from scoring.tables import MIN_KIND_CHECKS


def _tau_matrix(tau: pd.DataFrame, judges: list[str]) -> list[list[float | None]]:
    lookup: dict[tuple[str, str], float] = {}
    for a, b, t in zip(tau["judge_a"], tau["judge_b"], tau["tau_b"], strict=True):
        lookup[(str(a), str(b))] = lookup[(str(b), str(a))] = float(t)
    return [[1.0 if a == b else lookup.get((a, b)) for b in judges] for a in judges]


def _kind_kappa(kp: pd.DataFrame) -> tuple[Table, str] | None:
    """One setting's kappa per check kind: a table with one row per (kind, secondary) and a kappa
    (with its interval) and a count column per judge pair, and the sentence naming the
    least-agreed kinds; None when there is no judge pair (a single judge)."""
    if kp.empty:
        return None
    pairs = list(
        dict.fromkeys(zip(kp["judge_a"].astype(str), kp["judge_b"].astype(str), strict=True))
    )
    kinds = list(
        dict.fromkeys(zip(kp["kind"].astype(str), kp["secondary"].astype(bool), strict=True))
    )
    cols = [Column("kind", "Check kind"), Column("secondary", "Secondary", "yes_no")]
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
        cells[k][f"k{i}"], cells[k][f"n{i}"] = _KAPPA[2].cell(r), Cell(r["n_checks"])
        kappa = number(r["kappa"])
        if kappa is not None and (k not in worst or kappa < worst[k].kappa):
            label = f"secondary {k[0]}" if k[1] else k[0]
            worst[k] = Kappa(label, kappa, pair, r.get("kappa_lo"), r.get("kappa_hi"))
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

    ``kinds``: each kind's lowest kappa over the ``n_pairs`` judge pairs, with its pair and
    interval; ranked by it (ties in the given order), so every number printed is the table's.
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


_TAU = [
    Column("a", "Judge A", src="judge_a"),
    Column("b", "Judge B", src="judge_b"),
    Column("tau", "Kendall tau-b", "f2", src="tau_b"),
    Column("diff", "Largest score difference", "f1", src="max_abs_diff"),
    Column("who", "Model with the largest difference"),
]
_LENIENCY = [Column("judge", "Judge"), Column("offset", "Offset vs primary [95% CI]", "signed_ci")]
_SELF = [
    Column("judge", "Judge"),
    Column("family", "Family"),
    Column("own", "Own family's models", "f1", src="own_score"),
    Column("others", "Other judges on them", "f1", "The mean of every other judge's score",
           "others_score_of_own"),
    Column("diff", "Difference", "signed", src="own_minus_others"),
    Column("ofd", "Same difference, other families", "signed", src="other_families_diff"),
    Column("sp", "Self-preference [95% CI]", "signed_ci", "Against every other judge",
           "self_preference"),
    Column("spp", "Against the primary alone [95% CI]", "signed_ci",
           src="self_preference_primary"),
]  # fmt: skip
_KAPPA = [
    Column("a", "Judge A", src="judge_a"),
    Column("b", "Judge B", src="judge_b"),
    Column("kappa", "Cohen's kappa [95% CI]", "f2_ci"),
    Column("agree", "Exact agreement [95% CI]", "pct_ci", src="agreement"),
    Column("n", "Checks compared", "integer", src="n_checks"),
]
_DRIFT = [
    Column("judge", "Judge"),
    Column("old", "Earlier snapshot", src="old_snapshot"),
    Column("new", "New snapshot", src="new_snapshot"),
    Column("n", "Calibration pairs", "integer", src="n_pairs"),
    Column("agree", "Exact agreement", "pct", src="agreement"),
    Column("kappa", "Cohen's kappa", "f2"),
    Column("diff", "Score difference (new - earlier)", "signed", src="score_diff"),
]


def _section(
    tables: ScoreTables, setting: str, judges: list[str], names: dict[str, str], root: str
) -> dict[str, Any]:
    """One setting's part of the judges page."""

    def part(name: str) -> pd.DataFrame:
        df = tables[name]
        return df[df["setting"] == setting]

    def who(r: Any) -> dict[str, Cell]:
        return {"who": Cell(names.get(str(r["max_diff_submission"]), r["max_diff_submission"]))}

    label = setting_label(setting)
    js, tau = part("judge_scores"), part("judge_tau")
    prim = js[js["judge"] == tables.primary_judge].sort_values("gamut", ascending=False)
    models = [str(s) for s in prim["submission_id"]] or sorted(
        {str(s) for s in js["submission_id"]}
    )
    cols, cells, by_judge = spread(
        js, "submission_id", models, "judge", judges, rank=True, key="j_"
    )
    first = model_cells(models, names, root)
    by_kind = _kind_kappa(part("judge_kappa_by_kind"))
    heat = charts.heatmap(
        judges, judges, _tau_matrix(tau, judges), x_title="Judge", y_title="Judge",
        z_title="Kendall tau-b", decimals=2, zrange=(-1.0, 1.0), cell=90,
    )  # fmt: skip
    return {
        "title": label,
        "scores": Table([Column("model", "Model"), *cols],
                        [Row(first[m] | cells[m]) for m in models],
                        caption=f"Scores by judge ({label})"),
        "figure": charts.dot_ci([names.get(m, m) for m in models], by_judge),
        "tau_figure": heat,
        "tau": table(_TAU, records(tau), who, "Agreement between judges' rankings"),
        "leniency": table(_LENIENCY, records(part("judge_leniency")), caption="Leniency"),
        "self_pref": table(_SELF, records(part("judge_self_preference")),
                           caption="Self-preference"),
        "kappa": table(_KAPPA, records(part("judge_kappa")),
                       caption="Verdict agreement over all checks (one kappa per judge pair)"),
        "kappa_kinds": by_kind[0] if by_kind else None,
        "least_agreed": by_kind[1] if by_kind else "",
        "claims": judge_claims(tables, setting, names),
        "ranks": rank_table(tables, setting, names),
    }  # fmt: skip


def judges_page(tables: ScoreTables, root: str = "") -> dict[str, Any]:
    """Context of ``judges.md``; ``root`` is the relative prefix from the page to the site root."""
    names = model_names(tables)
    js = tables["judge_scores"]
    judges = list(dict.fromkeys([tables.primary_judge, *sorted({str(j) for j in js["judge"]})]))
    columns = ("provider", "model", "prompt_link", "family", "primary")
    return {
        "sections": [_section(tables, s, judges, names, root) for s in ordered_settings(js)],
        "info": judge_table(tables, judge_entries(tables), columns, "Judges"),
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
    return table(_DRIFT, records(df), caption="Snapshot drift on the calibration pairs")
