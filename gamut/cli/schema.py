"""``gamut schema OUT_DIR``: JSON Schemas of every file format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from pydantic import TypeAdapter

from gamut.cli._common import err_console, handle_errors
from scoring.audit_line import AuditLine
from scoring.compiler import Check
from scoring.questions import Question
from scoring.rubric import MetaRubric
from scoring.storage import atomic_write_text
from scoring.submissions.formats import ResponseLine, SubmissionMeta
from scoring.verdicts import VerdictRow

#: Each format's type: a pydantic model, or a dataclass that pydantic reads (``Check``).
SCHEMAS: dict[str, type[Any]] = {
    "meta-rubric.schema.json": MetaRubric,
    "check.schema.json": Check,
    "verdict-row.schema.json": VerdictRow,
    "question.schema.json": Question,
    "response-line.schema.json": ResponseLine,
    "submission.schema.json": SubmissionMeta,
    "audit-label.schema.json": AuditLine,
}


def json_schemas() -> dict[str, dict[str, Any]]:
    """Every published schema, by file name."""
    out = {}
    for name, model in SCHEMAS.items():
        s = TypeAdapter(model).json_schema()
        s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = s
    return out


@click.command()
@click.argument("out_dir", type=click.Path(path_type=Path, file_okay=False))
@handle_errors
def schema(out_dir: Path) -> None:
    """Write JSON Schema files for the meta-rubric, a check, a verdict row, a question, a response
    line, submission.yaml and an audit label line into OUT_DIR, so editors can validate files as
    they are typed."""
    for name, s in json_schemas().items():
        atomic_write_text(out_dir / name, json.dumps(s, indent=2, sort_keys=True) + "\n")
    err_console.print(f"wrote {len(SCHEMAS)} schemas to {out_dir}")
