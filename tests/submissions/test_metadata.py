"""submission.yaml: the pydantic model's rules, reported with YAML line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from gamut import pipeline
from gamut.cli.schema import json_schemas
from gamut.config import load_config
from gamut.project import Project as GamutProject
from generator.build import generate_pages
from generator.tables import load_tables
from scoring.errors import Problem
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import StrictLoader, yaml_problem
from tests.submissions.helpers import GOOD_META, Project
from tests.tables.conftest import main_project

YAML = "submissions/acme/submission.yaml"


def meta_errors(project: Project, meta: str | dict[str, object]) -> list[Problem]:
    project.write("acme", meta=meta)
    report = pipeline.validate(GamutProject(project.cfg))
    assert all(p.file == YAML for p in report.errors), report.to_text()
    return report.errors


def test_good_metadata_validates_and_has_a_schema(project: Project) -> None:
    assert meta_errors(project, GOOD_META) == []
    schema = SubmissionMeta.model_json_schema()
    assert set(schema["required"]) >= {"model_name", "organisation", "model_family", "link"}
    json.dumps(schema)


def test_yaml_syntax_error_has_its_line(project: Project) -> None:
    text = "model_name: Acme\norganisation: [Acme\nmodel_family: acme\n"
    (err,) = meta_errors(project, text)
    assert err.line == 3 and err.message.startswith("not valid YAML")


def test_not_a_mapping(project: Project) -> None:
    (err,) = meta_errors(project, "- just\n- a list\n")
    assert err.message == "not a YAML mapping of field: value"


def test_each_field_error_on_its_line_all_at_once(project: Project) -> None:
    text = """\
model_name: Acme-VL 2
organisation: ""
model_family: acme
link: not a url
open_weights: perhaps
date: 2026-13-45
contact: "@acme"
production:
  decoding: temperature 0
  tools: false
  web_access: false
  colour: blue
"""
    got = {(p.line, p.message.split(":")[0]) for p in meta_errors(project, text)}
    assert got == {
        (2, "organisation"),
        (4, "link"),
        (5, "open_weights"),
        (6, "date"),
        (12, "unknown field production.colour"),
    }


def test_missing_fields(project: Project) -> None:
    meta = {k: v for k, v in GOOD_META.items() if k not in ("contact", "production")}
    meta["production"] = {"decoding": "t=0", "tools": False}
    errs = meta_errors(project, meta)
    assert {p.message for p in errs} == {
        "contact is missing",
        "production.web_access is missing",
    }
    web = next(p for p in errs if "web_access" in p.message)
    assert "search or browse the web" in web.fix


def test_duplicate_key(project: Project) -> None:
    text = "model_name: A\nmodel_name: B\nproduction:\n  tools: false\n  tools: true\n"
    errs = meta_errors(project, text)
    assert {(p.line, p.message) for p in errs} == {
        (2, "model_name is given twice"),
        (5, "production.tools is given twice"),
    }  # every duplicate at once, and no value of either copy is taken


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("model_name: A\n<<: {model_name: B}\n", 2, "merge keys (<<) are not allowed"),
        ("model_name: A\nx: {1: a, 0x1: b}\n", 2, "1 is given twice (first on line 2)"),
        ("model_name: A\nx:\n  - {a: 1, a: 2}\n", 3, "a is given twice"),
    ],
)
def test_keys_equal_in_value_or_merged_in_are_refused(
    project: Project, text: str, line: int, message: str
) -> None:
    (err,) = meta_errors(project, text)
    assert err.line == line and message in err.message, err


def test_the_strict_loader_refuses_what_safe_load_takes_silently() -> None:
    text = "model_name: Incumbent\nmodel_name: Impostor\n"
    assert yaml.safe_load(text) == {"model_name": "Impostor"}  # PyYAML 6 keeps the last
    with pytest.raises(yaml.YAMLError) as caught:
        yaml.load(text, Loader=StrictLoader)
    assert yaml_problem(caught.value) == (
        2,
        "not valid YAML: model_name is given twice (first on line 1)",
    )
    assert yaml.load("a: 1\nb: {a: 2}\n", Loader=StrictLoader) == {"a": 1, "b": {"a": 2}}


def test_not_utf8(project: Project) -> None:
    folder = project.write("acme")
    (folder / "submission.yaml").write_bytes(b"model_name: Acm\xe9\n")
    (err,) = pipeline.validate(GamutProject(project.cfg)).errors
    assert err.message.startswith("not valid UTF-8")


TRAINING = {
    "datasets": ["COCO 2017 train", "Wikipedia 2025-06 dump"],
    "contamination": "possible",
    "notes": "Wikipedia shares some of the questions' sources.\nNo question text was found.",
}


def test_training_data_is_optional_and_checked_with_its_lines(project: Project) -> None:
    assert meta_errors(project, {**GOOD_META, "training_data": TRAINING}) == []
    schema = json_schemas()["submission.schema.json"]
    jsonschema.validate({**GOOD_META, "training_data": TRAINING}, schema)
    text = yaml.safe_dump({**GOOD_META, "training_data": {"datasets": "COCO",
                           "contamination": "maybe", "leak": True}}, sort_keys=False)  # fmt: skip
    got = {(p.line, p.message.split(":")[0]) for p in meta_errors(project, text)}
    lines = text.splitlines()
    at = {k: n for n, line in enumerate(lines, 1) for k in ("datasets", "contamination", "leak")
          if line.strip().startswith(f"{k}:")}  # fmt: skip
    assert got == {
        (at["datasets"], "training_data.datasets"),
        (at["contamination"], "training_data.contamination"),
        (at["leak"], "unknown field training_data.leak"),
    }
    bad = {**GOOD_META, "training_data": {"contamination": "maybe"}}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


def test_the_model_page_shows_the_declared_training_data(tmp_path: Path) -> None:
    config = main_project().write(tmp_path / "project")
    meta_file = tmp_path / "project" / "submissions" / "alpha" / "submission.yaml"
    meta = yaml.safe_load(meta_file.read_text())
    meta_file.write_text(yaml.safe_dump({**meta, "training_data": TRAINING}))
    gp = GamutProject(load_config(config))
    tables = pipeline.score(gp)
    lb = tables.frames["leaderboard"].set_index("submission_id")
    assert set(lb.loc["alpha", "contamination"]) == {"possible"}
    assert set(lb.loc["alpha", "training_datasets"]) == {"COCO 2017 train; Wikipedia 2025-06 dump"}
    assert lb.loc["beta", "contamination"].isna().all()
    docs = tmp_path / "docs"
    docs.mkdir()
    generate_pages(gp.site_spec(), docs, load_tables(gp.results_layout.root))
    alpha = (docs / "submissions" / "alpha.md").read_text(encoding="utf-8")
    section = alpha.split("## Training data and contamination")[1].split("\n## ")[0]
    assert "<dt>Contamination</dt><dd>possible</dd>" in section
    assert "<dd>COCO 2017 train; Wikipedia 2025-06 dump</dd>" in section
    assert "No question text was found." in section
    beta = (docs / "submissions" / "beta.md").read_text(encoding="utf-8")
    assert "Not declared" in beta.split("## Training data and contamination")[1].split("\n## ")[0]
