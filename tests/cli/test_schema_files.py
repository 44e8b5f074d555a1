"""Every file the project writes that has a published schema validates against it.

The files are written by the commands themselves (``gamut schema``, ``gamut-workbench demo
paper``, ``gamut rubric compile``) and the demo's committed files (written by ``gamut-workbench
demo write``); each is read as the JSON values it holds and validated with the ``jsonschema``
library against the schema files ``gamut schema`` wrote. Verdict rows (``gamut export
verdicts``, the published table) are in ``tests/judge/test_verdict_schema.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import yaml
from click.testing import CliRunner

from gamut.cli import main
from gamut.cli.schema import json_schemas
from scoring.jsonl import read_jsonl
from scoring.submissions.metadata import _Loader
from tests.schema_tally import validate_file, written
from workbench.cli import main as workbench_main

ROOT = Path(__file__).resolve().parents[2]


def _jsonl(path: Path) -> Iterator[Any]:
    f = read_jsonl(path, path.name, "one JSON object per line")
    assert not f.problems, f.problems
    return (line.value for line in f.lines)


def _yaml(path: Path) -> Iterator[Any]:
    # as an editor's YAML reader sees it: a date is text (the validator's loader does the same)
    yield yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader subclass


def _json(path: Path) -> Iterator[Any]:
    obj = json.loads(path.read_text(encoding="utf-8"))
    yield from obj if isinstance(obj, list) else [obj]


def _parquet(path: Path) -> Iterator[Any]:
    for row in pd.read_parquet(path).astype(object).to_dict("records"):
        yield {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}


def _files(root: Path) -> list[tuple[str, Path, Any]]:
    """(schema, file, reader) for every file under a project folder that has a schema."""
    out: list[tuple[str, Path, Any]] = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.name == "questions.jsonl":
            out.append(("question.schema.json", p, _jsonl))
        elif p.name == "rubrics.jsonl":
            out.append(("meta-rubric.schema.json", p, _jsonl))
        elif rel.startswith("rubrics/") and p.suffix == ".json":
            out.append(("meta-rubric.schema.json", p, _json))
        elif p.name == "checks.jsonl":
            out.append(("check.schema.json", p, _jsonl))
        elif rel.startswith("submissions/") and p.name == "submission.yaml":
            out.append(("submission.schema.json", p, _yaml))
        elif rel.startswith("submissions/") and p.suffix == ".jsonl":
            out.append(("response-line.schema.json", p, _jsonl))
        elif rel.startswith("audit/") and p.suffix == ".jsonl":
            out.append(("audit-label.schema.json", p, _jsonl))
        elif rel == "results/verdicts.parquet":
            out.append(("verdict-row.schema.json", p, _parquet))
    return out


def test_gamut_schema_writes_valid_schemas_of_every_format(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["schema", str(tmp_path)])
    assert r.exit_code == 0, r.output
    files = sorted(tmp_path.iterdir())
    written(len(files))
    assert [f.name for f in files] == sorted(json_schemas())
    for f in files:
        schema = json.loads(f.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema == json_schemas()[f.name]


def test_every_file_a_written_project_holds_validates_against_its_schema(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "paper"
    small = ["--questions", "12", "--models", "2", "--judges", "1", "--checks", "8"]
    r = runner.invoke(workbench_main, ["demo", "paper", "--out", str(out), *small])
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        main, ["rubric", "compile", str(out / "rubrics.jsonl"), "-o", str(out / "checks.jsonl")]
    )
    assert r.exit_code == 0, r.output
    files = _files(out)
    written(len(files))
    kinds = {schema for schema, _, _ in files}
    # a paper-scale project has no audit labels: the demo's are validated below
    expected = set(json_schemas()) - {"audit-label.schema.json"}
    assert kinds == expected, expected - kinds
    for schema, path, reader in files:
        validate_file(schema, str(path.relative_to(tmp_path)), reader(path))


def test_the_demo_files_validate_against_their_schemas() -> None:
    files = _files(ROOT / "demo")
    kinds = {schema for schema, _, _ in files}
    assert {"question.schema.json", "meta-rubric.schema.json", "submission.schema.json"} <= kinds
    assert "response-line.schema.json" in kinds
    assert "audit-label.schema.json" in kinds
    for schema, path, reader in files:
        validate_file(schema, str(path.relative_to(ROOT)), reader(path))
