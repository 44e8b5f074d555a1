"""The human audit on the site: the judges page's "Judge vs human" section and the leaderboard's
"Corrected (PPI)" view. Reads the score tables ``judge_human``, ``human_human`` and the
leaderboard's PPI columns only: ids, kinds and counts, never check text.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from generator.render import Cell, Column, Row, Table, setting_label
from generator.tables import ScoreTables
from scoring.questions import Setting

VERDICTS = (
    ("meets", "Meets"),
    ("partial", "Partially meets"),
    ("missing", "Missing"),
    ("contradicts", "Contradicts"),
)
SIMULATED_NOTE = (
    "These audit labels are simulated: no person labelled anything. The demo generator derives "
    "them from its known labels with a stated error rate (see the demo's README)."
)


def audit_info(tables: ScoreTables) -> dict[str, Any] | None:
    """What the provenance says of the audit (labels, annotators, simulated), or None."""
    info = tables.provenance.get("audit")
    return info if isinstance(info, dict) else None


def has_corrected(lb: pd.DataFrame) -> bool:
    """Whether any leaderboard row has a PPI-corrected score."""
    return "gamut_ppi" in lb.columns and bool(lb["gamut_ppi"].notna().any())


def _num(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else float(x)


#: The agreement figures shown side by side (judge, then annotators): key, table column, label,
#: format and meaning.
_FIGURES = (
    ("agreement", "agreement", "Agreement", "pct_ci", "Exact agreement"),
    ("kappa", "kappa", "Kappa", "f2_ci", "Cohen's kappa"),
    ("kappa_w", "kappa_linear", "Weighted kappa", "f2_ci", "Linear weights: a near miss counts"),
    ("f1", "macro_f1", "Macro-F1", "f2_ci", "Mean F1 over the four verdicts"),
)


def _agreement_table(sub: pd.DataFrame, like: dict[Any, Any], ceiling: Any, setting: str) -> Table:
    """One setting's judge-against-annotator figures beside the annotators' own, per judge and
    check kind, each with its interval over questions."""
    judge = [
        Column(key, f"{label} [95% CI]", form, f"{meaning}, judge against each label", src)
        for key, src, label, form, meaning in _FIGURES
    ]
    humans = [
        Column(
            f"h_{key}", f"Human {label[0].lower()}{label[1:]}", form, f"{meaning}, annotators", src
        )
        for key, src, label, form, meaning in _FIGURES
    ]
    rows = []
    for _, r in sub.iterrows():
        kind = str(r["kind"])
        c = ceiling.loc[kind] if kind in ceiling.index else None
        a = like.get((setting, str(r["judge"]), kind))  # the judge against each annotator
        cells = {
            "judge": Cell(str(r["judge"])),
            "kind": Cell(kind),
            "n": Cell(None if a is None else int(a["n_checks"])),
            "leniency": Cell(_num(r["leniency"])),
        }
        cells |= {col.key: col.cell(a) if a is not None else Cell(None) for col in judge}
        cells |= {col.key: col.cell(c) if c is not None else Cell(None) for col in humans}
        rows.append(Row(cells, attrs={"judge": str(r["judge"]), "kind": kind}))
    cols = [
        Column("judge", "Judge"),
        Column("kind", "Check kind"),
        Column("n", "Labels", "integer", "Annotators' labels on checks the judge judged"),
        *(col for pair in zip(judge, humans, strict=True) for col in pair),
        Column("leniency", "Leniency", "f2", "Judge's mean value minus the final verdicts'"),
    ]
    caption = f"Judge against the human labels ({setting_label(setting)})"
    return Table(cols, rows, caption, f"judge-human-{setting}")


def _confusion_table(sub: pd.DataFrame, primary: str, setting: str) -> Table | None:
    """The primary judge's confusion counts against the final human verdicts, or None."""
    rows = sub[(sub["judge"] == primary) & (sub["kind"] == "all")]
    if not len(rows):
        return None
    p = rows.iloc[0]
    return Table(
        [
            Column("judge", "Judge said \\ humans said"),
            *(Column(h, label, "integer") for h, label in VERDICTS),
        ],
        [
            Row(
                {
                    "judge": Cell(label),
                    **{h: Cell(int(p[f"judge_{j}_human_{h}"])) for h, _ in VERDICTS},
                }
            )
            for j, label in VERDICTS
        ],
        caption=f"Confusion counts of the primary judge, {primary} ({setting_label(setting)})",
        sortable=False,
    )


def judge_vs_human(tables: ScoreTables) -> dict[str, Any] | None:
    """Context of the judges page's "Judge vs human" section, or None without audit labels."""
    jh = tables.frames.get("judge_human")
    if jh is None or jh.empty:
        return None
    hh = tables.frames.get("human_human")
    ja = tables.frames.get("judge_annotator")
    like = (
        {(str(x["setting"]), str(x["judge"]), str(x["kind"])): x for _, x in ja.iterrows()}
        if ja is not None
        else {}
    )
    info = audit_info(tables) or {}
    sections = []
    for setting in [s.value for s in Setting if (jh["setting"] == s.value).any()]:
        sub = jh[jh["setting"] == setting]
        ceiling = (
            hh[hh["setting"] == setting].set_index("kind")
            if hh is not None and not hh.empty
            else pd.DataFrame()
        )
        sections.append(
            {
                "title": setting_label(setting),
                "agreement": _agreement_table(sub, like, ceiling, setting),
                "confusion": _confusion_table(sub, tables.primary_judge, setting),
            }
        )
    return {
        "sections": sections,
        "labels": info.get("labels"),
        "annotators": info.get("annotators"),
        "simulated": bool(info.get("simulated")),
        "simulated_note": SIMULATED_NOTE,
    }


#: The leaderboard's corrected columns, shown instead of score, rank and tie group when the
#: "Corrected (PPI)" toggle is on.
PPI_COLUMNS = [
    Column("rank_ppi", "Rank (PPI)", "integer", "Rank by the corrected score"),
    Column("gamut_ppi", "Corrected [95% CI]", "ci", "Gamut score corrected by the human audit"),
    Column("tie_ppi", "Tie group (PPI)", "integer", "Tie group under the corrected score",
           "tie_group_ppi"),
    Column("audited", "Audited", "integer", "Questions whose response humans labelled in full",
           "audited_questions"),
]  # fmt: skip


def ppi_sentence(
    lb: pd.DataFrame,
    simulated: bool,
    incomplete: pd.DataFrame | None = None,
    names: dict[str, str] | None = None,
) -> str:
    """What the correction does and what its interval is for, in one paragraph, with the
    audited counts and the questions left out for incomplete human verdicts, by name."""
    counts = lb["audited_questions"].dropna().astype(int)
    counts = counts[counts > 0]
    span = (
        f"{counts.min()} to {counts.max()}" if counts.min() != counts.max() else str(counts.min())
    )
    text = (
        "Corrected (PPI) adds to each score the mean difference between the human and the judge "
        f"question scores over the audited questions ({span} per row), each weighed by the "
        "inverse of its chance of being drawn in the audit's draw by domain, so the judge's "
        "systematic error is removed (prediction-powered inference). Its 95% interval is for "
        "the mean over the population of questions the benchmark samples, not only these: it "
        "counts the audited questions among all of them, the draw's domains as strata and the "
        "question as the unit. Rows with fewer than 2 audited questions have no corrected score."
    )
    if incomplete is not None and len(incomplete):
        names = names or {}
        parts = [
            f"{names.get(str(sid), str(sid))} ({setting_label(str(setting))}): "
            + ", ".join(str(q) for q in part["question_id"])
            for (sid, setting), part in incomplete.groupby(
                ["submission_id", "setting"], sort=True, observed=True
            )
        ]
        text += (
            " Left out of the correction because their human verdicts are incomplete (a check "
            "not labelled, or a disagreement not adjudicated): " + "; ".join(parts) + "."
        )
    return f"{text} {SIMULATED_NOTE}" if simulated else text


def mdd_sentence(tables: ScoreTables) -> str | None:
    """The smallest difference the primary judge's question sample detects, per setting."""
    t = tables.frames.get("min_detectable_difference")
    if t is None:
        return None
    t = t[(t["judge"] == tables.primary_judge) & (t["board"] == "all") & t["mdd"].notna()]
    if t.empty:
        return None
    parts = [
        f"{float(r['mdd']):.1f} points ({setting_label(str(r['setting']))})"
        for _, r in t.iterrows()
    ]
    return (
        "With this question sample, two models must differ by at least "
        + " and ".join(parts)
        + " for the difference to be detected with 80% power at the 5% level (a paired test "
        "over questions, from neighbouring models' question-score differences); per-domain "
        "figures are in the min_detectable_difference download."
    )
