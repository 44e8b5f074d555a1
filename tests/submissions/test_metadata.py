"""submission.yaml: the pydantic model's rules, reported with YAML line numbers."""

from __future__ import annotations

import json

import pytest
import yaml

from gamut import pipeline
from gamut.project import Project as GamutProject
from scoring.errors import Problem
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import StrictLoader, yaml_problem
from tests.submissions.helpers import GOOD_META, Project

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
