"""``gamut rubric lint | compile | show``: maintainers' rubric tools."""

from __future__ import annotations

from pathlib import Path

import click
from rich.columns import Columns
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gamut.cli._common import emit, err_console, fail, handle_errors, out_console, styled
from scoring.compiler import check_adapter, compile_rubric
from scoring.errors import RubricError
from scoring.rubric import (
    FlexibleList,
    Insight,
    MetaRubric,
    Process,
    Relationship,
    StrictList,
    Tier,
)
from scoring.rubric_io import lint_warnings, load_rubrics, read_rubrics
from scoring.storage import atomic_write_text

PATHS = click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=False)
)


@click.group()
def rubric() -> None:
    """Maintainers' tools for meta-rubrics (held: treat their output as private)."""


@rubric.command()
@PATHS
@handle_errors
def lint(paths: tuple[Path, ...]) -> None:
    """Check every rubric in PATHS (JSON, JSONL files or folders); report all problems at once.

    Exits 1 if any rubric breaks a rule. Warnings (uncited items, unused snippets) do not fail.
    """
    good, problems = read_rubrics(paths)
    warnings = [w for s in good for w in lint_warnings(s)]
    for w in warnings:
        err_console.print(styled(str(w), "yellow"))
    n_checks = sum(len(compile_rubric(s.rubric)) for s in good)
    summary = (
        f"{len(good)} valid rubric(s), {n_checks} checks; "
        f"{len(problems)} error(s), {len(warnings)} warning(s)"
    )
    if problems:
        fail(summary, [str(p) for p in problems])
    out_console.print(summary)


@rubric.command("compile")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the checks here (JSON Lines) instead of standard output.",
)
@handle_errors
def compile_cmd(path: Path, out: Path | None) -> None:
    """Compile the rubrics at PATH into checks, one JSON object per line."""
    rubrics = load_rubrics([path])
    adapter = check_adapter()
    lines = [
        adapter.dump_json(c).decode()
        for qid in sorted(rubrics)
        for c in compile_rubric(rubrics[qid])
    ]
    text = "\n".join(lines) + "\n"
    if out is None:
        emit(text)
    else:
        atomic_write_text(out, text)
        err_console.print(f"wrote {len(lines)} checks for {len(rubrics)} question(s) to {out}")


def _item_text(item: object) -> Text:
    t = Text()
    if isinstance(item, StrictList | FlexibleList):
        t.append(f"{item.topic}\n", style="bold")
        for m in item.members:
            t.append(f"  - {m}\n")
        if isinstance(item, FlexibleList):
            t.append(f"  baselines {item.baselines}")
            if item.coverage_thresholds:
                t.append(f", coverage {item.coverage_thresholds}")
            t.append("\n")
    elif isinstance(item, Process):
        t.append(f"{item.topic}\n", style="bold")
        for j, s in enumerate(item.steps, 1):
            t.append(f"  {j}. {s.text}" + ("" if s.required else " (optional)") + "\n")
    elif isinstance(item, Relationship):
        t.append(f"{item.entity}: {item.relation}\n", style="bold")
        for a in item.aspects:
            t.append(f"  - {a}\n")
    else:
        t.append(getattr(item, "text", ""))
    insight: Insight | None = getattr(item, "insight", None)
    if insight is not None:
        t.append(f"\n  insight ({insight.tier.short}): {insight.text}", style="italic")
    return t


def _side_by_side(r: MetaRubric) -> Columns:
    items = Table(title="meta-rubric", show_lines=True, expand=True)
    items.add_column("id")
    items.add_column("type / tier")
    items.add_column("content", ratio=1)
    for item in r.items:
        items.add_row(item.id, f"{item.type}\n{item.tier.short}", _item_text(item))
    checks = compile_rubric(r)
    panels = []
    for tier in Tier:
        rows = [c for c in checks if c.tier is tier]
        t = Table(expand=True, show_header=True)
        t.add_column("check")
        t.add_column("kind")
        t.add_column("text", ratio=1)
        for c in rows:
            t.add_row(c.check_id + (" *" if c.secondary else ""), c.kind.value, c.text)
        panels.append(Panel(t, title=f"{tier.value} ({len(rows)} checks)"))
    right = Table.grid(expand=True)
    for p in panels:
        right.add_row(p)
    return Columns([items, right], equal=True, expand=True)


@rubric.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--question", "question_id", required=True, help="Question id to show.")
@handle_errors
def show(path: Path, question_id: str) -> None:
    """Show one meta-rubric beside the checklist it compiles into, grouped by tier.

    Secondary checks are marked with '*'.
    """
    rubrics = load_rubrics([path])
    if question_id not in rubrics:
        raise RubricError(
            [],
            f"no rubric for question {question_id!r} in {path} (it has {len(rubrics)} rubric(s))",
        )
    r = rubrics[question_id]
    out_console.print(
        Panel(
            Text.assemble(
                (r.question_id, "bold"),
                f"  {len(r.items)} items, {len(compile_rubric(r))} checks ('*' = secondary)",
            )
        )
    )
    out_console.print(_side_by_side(r))
