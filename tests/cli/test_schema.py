"""The published JSON Schemas (``gamut schema``) and the validators agree, case by case.

Each case is one value: the schema (the ``jsonschema`` library, formats checked) and the
project's own validator must both accept it or both refuse it. A rule the schema cannot state
(a count bounded by another field, ids unique across items) is in the schema's descriptions and
enforced by the validator: those cases assert exactly that.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from scoring.errors import ProblemsError, RubricError
from scoring.questions import load_questions
from scoring.rubric import MetaRubric
from scoring.submissions import Limits
from scoring.submissions.formats import ResponseLine
from scoring.submissions.metadata import check_metadata
from scoring.submissions.responses import read_response_file
from tests.schema_tally import agree, errors
from tests.submissions.helpers import GOOD_META

FLEX = {
    "id": "I1",
    "type": "flexible_list",
    "tier": "answer_critical",
    "topic": "dishes",
    "members": ["a", "b", "c", "d", "e", "f"],
    "baselines": [2],
}
RUBRIC: dict[str, Any] = {
    "question_id": "food-0001",
    "snippets": [{"id": "s1", "url": "https://example.org", "title": "T", "text": "x"}],
    "items": [
        FLEX,
        {
            "id": "I2",
            "type": "process",
            "tier": "valuable",
            "topic": "cooking",
            "steps": [{"text": "boil", "required": True}],
            "cites": ["s1"],
        },
    ],
}
QUESTION: dict[str, Any] = {
    "question_id": "food-0001",
    "image_id": "img-1",
    "image": None,
    "domain": "food",
    "popularity": "head",
    "egocentric": False,
    "question": "What is this dish?",
    "text_only_question": "What is pad thai?",
}


def _set(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``base`` with the value at a dotted path (``items.0.baselines``) replaced or removed
    (``...`` removes it)."""
    out = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = out
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    key: Any = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return out


def _meta_accepted(tmp_path: Path, value: dict[str, Any]) -> bool:
    path = tmp_path / "submission.yaml"
    path.write_text(yaml.safe_dump(value, allow_unicode=True), encoding="utf-8")
    meta, problems = check_metadata(path, "submission.yaml")
    assert all(p.file == "submission.yaml" and p.fix for p in problems)
    return meta is not None and not problems


def _rubric_accepted(value: dict[str, Any]) -> bool:
    try:
        MetaRubric.model_validate(value)
    except RubricError:
        return False
    return True


def _question_accepted(tmp_path: Path, value: dict[str, Any]) -> bool:
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps(value, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        load_questions(path)
    except ProblemsError:
        return False
    return True


def _response_accepted(tmp_path: Path, value: dict[str, Any]) -> bool:
    try:
        ResponseLine.model_validate(value)
    except ValidationError:
        model = False
    else:
        model = True
    # the validator's own reader of response files says the same of the line
    path = tmp_path / "text_only.jsonl"
    path.write_text(json.dumps(value) + "\n", encoding="utf-8")
    read = read_response_file(path, "text_only.jsonl", "text_only", None, Limits())
    errors = [p for p in read.problems if p.severity == "error"]
    assert model == (not errors), (value, errors)
    assert all(p.line == 1 and p.fix for p in errors)
    return model


META_CASES: list[tuple[str, str, Any]] = [
    ("good", "model_name", "Acme-VL 2"),
    ("open_weights-yes-text", "open_weights", "yes"),
    ("open_weights-true-text", "open_weights", "true"),
    ("open_weights-1", "open_weights", 1),
    ("tools-no-text", "production.tools", "no"),
    ("demo-false-text", "demo", "false"),
    ("date-with-time", "date", "2026-01-01T00:00:00"),
    ("date-not-a-day", "date", "2026-02-30"),
    ("date-short", "date", "2026-1-1"),
    ("date-compact", "date", "20260101"),
    ("link-javascript", "link", "javascript:alert(1)"),
    ("link-ftp", "link", "ftp://example.org/model"),
    ("link-space", "link", "https://example.org/a b"),
    ("link-no-host", "link", "https://"),
    ("link-http", "link", "http://example.org/model"),
    ("link-bidi", "link", "https://example.org/\u202eevil"),
    ("name-rlo", "model_name", "Acme\u202eLV"),
    ("name-blank", "model_name", "   "),
    ("name-tab", "model_name", "Acme\tVL"),
    ("name-newline", "model_name", "Acme\nVL"),
    ("name-nul", "model_name", "Acme\x00"),
    ("name-accented", "model_name", "Acmé-VL 2 ✓"),
    ("organisation-zwsp", "organisation", "Acme\u200bAI"),
    ("organisation-bom", "organisation", "\ufeffAcme"),
    ("organisation-long", "organisation", "x" * 201),
    ("family-lrm", "model_family", "gpt\u200e"),
    ("contact-int", "contact", 5),
    ("parameters-null", "parameters", None),
    ("parameters-soft-hyphen", "parameters", "7\u00adB"),
    ("notes-lines", "production.notes", "line one\nline two\twith a tab"),
    ("notes-line-separator", "production.notes", "one\u2028two"),
    ("notes-too-long", "production.notes", "x" * 2001),
    ("system-prompt-bidi", "production.system_prompt", "be \u2067helpful"),
    ("unknown-field", "license", "mit"),
    ("missing-contact", "contact", ...),
    ("missing-production-decoding", "production.decoding", ...),
]


@pytest.mark.parametrize(
    ("path", "value"), [c[1:] for c in META_CASES], ids=[c[0] for c in META_CASES]
)
def test_submission_schema_and_validator_agree(tmp_path: Path, path: str, value: Any) -> None:
    doc = _set(GOOD_META, path, value)
    agree(not errors("submission.schema.json", doc), _meta_accepted(tmp_path, doc))


RUBRIC_CASES: list[tuple[str, str, Any]] = [
    ("good", "question_id", "food-0001"),
    ("baselines-true", "items.0.baselines", [True]),
    ("baselines-text", "items.0.baselines", ["2"]),
    ("baselines-float-whole", "items.0.baselines", [2.0]),
    ("baselines-float", "items.0.baselines", [1.5]),
    ("baselines-three", "items.0.baselines", [1, 2, 3]),
    ("baselines-empty", "items.0.baselines", []),
    ("coverage-true", "items.0.coverage_thresholds", [True]),
    ("required-yes-text", "items.1.steps.0.required", "yes"),
    ("required-1", "items.1.steps.0.required", 1),
    ("topic-blank", "items.0.topic", "  "),
    ("member-blank", "items.0.members.0", " "),
    ("one-member", "items.0.members", ["a"]),
    ("type-unknown", "items.0.type", "bag"),
    ("tier-unknown", "items.0.tier", "critical"),
    ("item-id-space", "items.0.id", "I 1"),
    ("snippet-url-ftp", "snippets.0.url", "ftp://example.org"),
    ("unknown-field", "items.0.weight", 2),
    ("no-items", "items", []),
]


@pytest.mark.parametrize(
    ("path", "value"), [c[1:] for c in RUBRIC_CASES], ids=[c[0] for c in RUBRIC_CASES]
)
def test_rubric_schema_and_validator_agree(path: str, value: Any) -> None:
    doc = _set(RUBRIC, path, value)
    agree(not errors("meta-rubric.schema.json", doc), _rubric_accepted(doc))


#: What the schema cannot state: the validator refuses, the schema's description says the rule.
RUBRIC_RULES: list[tuple[str, str, Any, str]] = [
    ("baseline-above-members", "items.0.baselines", [9], "below the number of members"),
    ("baselines-decreasing", "items.0.baselines", [3, 2], "strictly increasing"),
    ("coverage-above-members", "items.0.coverage_thresholds", [7], "at most the number"),
    ("duplicate-item-id", "items.1.id", "I1", "id unique within the rubric"),
    ("duplicate-member", "items.0.members.1", "A", "Distinct"),
    ("unknown-cite", "items.1.cites", ["s9"], "cites name snippet ids"),
    ("no-required-step", "items.1.steps.0.required", False, "At least one of them required"),
]


@pytest.mark.parametrize(
    ("path", "value", "rule"), [c[1:] for c in RUBRIC_RULES], ids=[c[0] for c in RUBRIC_RULES]
)
def test_rubric_rules_beyond_the_schema_are_described_and_enforced(
    path: str, value: Any, rule: str
) -> None:
    doc = _set(RUBRIC, path, value)
    assert not _rubric_accepted(doc)
    assert not errors("meta-rubric.schema.json", doc)
    from gamut.cli.schema import json_schemas

    assert rule in json.dumps(json_schemas()["meta-rubric.schema.json"])


QUESTION_CASES: list[tuple[str, str, Any]] = [
    ("good", "domain", "food"),
    ("egocentric-text", "egocentric", "false"),
    ("egocentric-0", "egocentric", 0),
    ("domain-blank", "domain", " "),
    ("popularity-unknown", "popularity", "mid"),
    ("image-url", "image", "https://example.org/a.jpg"),
    ("question-id-slash", "question_id", "food/1"),
    ("unknown-field", "answer", "pad thai"),
    ("missing-text-only", "text_only_question", ...),
]


@pytest.mark.parametrize(
    ("path", "value"), [c[1:] for c in QUESTION_CASES], ids=[c[0] for c in QUESTION_CASES]
)
def test_question_schema_and_reader_agree(tmp_path: Path, path: str, value: Any) -> None:
    doc = _set(QUESTION, path, value)
    agree(not errors("question.schema.json", doc), _question_accepted(tmp_path, doc))


_USAGE = {"input_tokens": 120, "output_tokens": 48}
RESPONSE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("good", {"question_id": "food-0001", "response": "Pad thai."}),
    ("empty-response", {"question_id": "food-0001", "response": ""}),
    ("response-number", {"question_id": "food-0001", "response": 5}),
    ("response-null", {"question_id": "food-0001", "response": None}),
    ("missing-response", {"question_id": "food-0001"}),
    ("extra-field", {"question_id": "food-0001", "response": "x", "score": 1}),
    ("usage", {"question_id": "q", "response": "x", "usage": _USAGE}),
    ("usage-zero", {"question_id": "q", "response": "x", "usage": {**_USAGE, "input_tokens": 0}}),
    (
        "usage-negative",
        {"question_id": "q", "response": "x", "usage": {**_USAGE, "output_tokens": -1}},
    ),
    (
        "usage-bool",
        {"question_id": "q", "response": "x", "usage": {**_USAGE, "input_tokens": True}},
    ),
    ("usage-text", {"question_id": "q", "response": "x", "usage": {**_USAGE, "input_tokens": "5"}}),
    (
        "usage-float",
        {"question_id": "q", "response": "x", "usage": {**_USAGE, "input_tokens": 1.5}},
    ),
    ("usage-half", {"question_id": "q", "response": "x", "usage": {"input_tokens": 5}}),
    ("usage-extra", {"question_id": "q", "response": "x", "usage": {**_USAGE, "cost": 1}}),
    ("usage-list", {"question_id": "q", "response": "x", "usage": [5, 7]}),
]


@pytest.mark.parametrize("doc", [c[1] for c in RESPONSE_CASES], ids=[c[0] for c in RESPONSE_CASES])
def test_response_line_schema_and_model_agree(tmp_path: Path, doc: dict[str, Any]) -> None:
    agree(not errors("response-line.schema.json", doc), _response_accepted(tmp_path, doc))


def test_the_reported_disagreements_are_now_refused_by_both(tmp_path: Path) -> None:
    """The cases of issue 22, by name: each side refused what the other accepted."""
    for path, value in [
        ("open_weights", "yes"),
        ("date", "2026-01-01T00:00:00"),
        ("link", "javascript:alert(1)"),
        ("link", "ftp://example.org/x"),
        ("model_name", "A\u202eB"),
        ("organisation", "A\u200bB"),
    ]:
        doc = _set(GOOD_META, path, value)
        assert errors("submission.schema.json", doc), (path, value)
        assert not _meta_accepted(tmp_path, doc), (path, value)
    doc = _set(RUBRIC, "items.0.baselines", [True])
    assert errors("meta-rubric.schema.json", doc) and not _rubric_accepted(doc)


def test_the_text_patterns_name_every_unsafe_character_a_pattern_can() -> None:
    """The schemas' patterns and :func:`unsafe_char` refuse the same characters of the Basic
    Multilingual Plane; beyond it (tag characters) the description says what the validator
    refuses."""
    import re

    from scoring.submissions.formats import MULTILINE_PATTERN, ONE_LINE_PATTERN, unsafe_char

    multi, one = re.compile(MULTILINE_PATTERN), re.compile(ONE_LINE_PATTERN)
    for code in [*range(0xD800), *range(0xE000, 0x10000)]:
        ch = chr(code)
        assert (multi.fullmatch(ch) is None) == (unsafe_char(ch, multiline=True) is not None), ch
        if not ch.isspace():
            assert (one.fullmatch(ch) is None) == (unsafe_char(ch) is not None), hex(code)


def test_a_tag_character_is_refused_and_the_schema_says_so(tmp_path: Path) -> None:
    doc = _set(GOOD_META, "model_name", "Acme\U000e0041")
    assert not _meta_accepted(tmp_path, doc)
    assert not errors("submission.schema.json", doc)  # beyond what a portable pattern names
    from gamut.cli.schema import json_schemas

    assert "U+E0000-U+E007F" in json_schemas()["submission.schema.json"]["description"]
