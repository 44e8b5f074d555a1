"""``gamut score``: the score tables, and a short leaderboard on the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich import box
from rich.table import Table

from gamut.cli._common import (
    config_option,
    err_console,
    fail_left_out,
    get_project,
    handle_errors,
    list_left_out,
    out_console,
    styled,
)
from scoring.numbers import f1

if TYPE_CHECKING:  # the report stack (pandas, pyarrow) loads only when the command runs
    from scoring.tables import Tables


def summary_table(tables: Tables, setting: str = "multimodal") -> Table:
    """The primary judge's leaderboard for one setting, as a rich table."""
    lb = tables.leaderboard
    rows = lb[(lb["primary"]) & (lb["setting"] == setting)]
    judge = tables.provenance["primary_judge"]
    out = Table(
        title=f"GAMUT leaderboard: {setting}, judge {judge}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for name in ("rank", "model", "Gamut", "95% CI", "AC", "V", "C", "gap"):
        out.add_column(
            name, justify="left" if name == "model" else "right", no_wrap=name != "model"
        )
    for r in rows.to_dict("records"):
        if r["status"] != "complete":
            out.add_row("-", str(r["model_name"]), "incomplete", *[""] * 5)
            continue
        ci = f"{f1(r['gamut_lo'])} to {f1(r['gamut_hi'])}"
        rank, lo, hi = int(r["rank"]), int(r["rank_lo"]), int(r["rank_hi"])
        shown = f"{rank}" if lo == hi else f"{rank} ({lo}-{hi})"
        cells = [f1(r[c]) for c in ("gamut", "gamut_lo", "ac", "v", "c", "gap")]
        cells[1] = ci
        out.add_row(shown, str(r["model_name"]), *cells)
    return out


def stale_reasons(tables: Tables) -> dict[str, int]:
    """Each reason why leaderboard rows are stale, with the number of rows it applies to."""
    lb = tables.leaderboard
    if "stale" not in lb.columns:
        return {}
    stale = lb[lb["stale"].fillna(False).astype(bool)]
    return {str(k): int(v) for k, v in stale["stale_reason"].value_counts(sort=False).items()}


@click.command()
@config_option
@handle_errors
def score(config_path: Path | None) -> None:
    """Score every valid submission from the verdict table and write the score tables.

    Reads <results>/verdicts.parquet (from `gamut judge`); writes every table under <results>/
    as Parquet, CSV and JSON, with provenance.json. A submission lacking any verdict is
    incomplete (not ranked); one that fails validation is left out (listed; exit 1).
    """
    from gamut import pipeline

    project = get_project(config_path)
    project.cfg.require_judges()  # a config without judges is named before anything is read
    chosen = pipeline.select(project)
    list_left_out(chosen.validation, "not scored")
    tables = pipeline.score(project, chosen.ids)
    out_console.print(summary_table(tables))
    incomplete = tables["incomplete"]
    for r in incomplete.itertuples(index=False):
        err_console.print(
            styled("incomplete: ", "yellow"),
            f"{r.submission_id} ({r.setting}, judge {r.judge}): "
            f"{r.n_missing} of {r.n_expected} checks have no verdict (run `gamut judge`)",
            sep="",
        )
    for reason, n in stale_reasons(tables).items():
        err_console.print(
            styled("stale: ", "yellow"),
            f"{n} leaderboard row(s) {reason} (run `gamut judge` to judge them again)",
            sep="",
        )
    ignored = tables.provenance.get("ignored_verdict_rows", 0)
    if ignored:
        err_console.print(
            f"ignored {ignored} verdict row(s) for unknown submissions, judges, "
            "questions or checks (stale: rewrite with `gamut judge`)"
        )
    err_console.print(f"wrote {len(tables.files)} files to {tables.out_dir}")
    if chosen.left_out:
        fail_left_out(chosen.left_out, "the rest is scored")
