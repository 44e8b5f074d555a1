"""Hostile submission files: each gets a named error with its file and line, within its limits,
and the validator, the judge's reader and the scorer's reader agree on every one of them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from gamut import pipeline
from gamut.cli import main
from gamut.project import Project as GamutProject
from scoring.jsonl import (
    MAX_DEPTH,
    JsonlLimits,
    dumps_line,
    json_depth,
    parse_line,
)
from scoring.submissions import read_jsonl, read_responses
from scoring.submissions.metadata import check_metadata
from tests.submissions.helpers import GOOD_META, QUESTION_IDS, RESPONSES, Project, good_lines, jsonl

# -- response files ------------------------------------------------------------------------------

LINE = '{"question_id": "%s", "response": %s}'
ACCEPTED = {  # raw characters inside a JSON string that str.splitlines() would split on
    "raw U+2028": "Pad thai\u2028is a noodle dish.",
    "raw U+2029": "Pad thai\u2029is a noodle dish.",
    "raw tab": "Pad thai\tis a noodle dish.",
    "form feed escaped": "Pad thai is a noodle dish.\\f",
    "vertical tab via escape": "Pad thai\\u000b",
}


def _raw_line(qid: str, raw_text: str) -> str:
    return LINE % (qid, '"' + raw_text + '"')


@pytest.mark.parametrize("case", ["raw U+2028", "raw U+2029", "raw tab"])
def test_line_separators_inside_a_string_read_the_same_everywhere(
    project: Project, case: str
) -> None:
    texts = dict(RESPONSES)
    qid = QUESTION_IDS[0]
    body = jsonl(good_lines(texts)).splitlines(keepends=True)
    body[0] = _raw_line(qid, ACCEPTED[case]) + "\n"
    folder = project.write("acme", multimodal="".join(body))
    report = pipeline.validate(GamutProject(project.cfg))
    assert report.ok, report.to_text()
    responses, problems = read_responses(folder / "multimodal.jsonl")  # the judge's reader
    assert not problems and responses[qid] == ACCEPTED[case]
    assert len(responses) == len(QUESTION_IDS)


REJECTED = {
    "nested 100,000 deep": ("[" * 100_000 + "]" * 100_000, "nested 100001 levels deep"),
    "object nested 50 deep": ('{"a":' * 50 + "1" + "}" * 50, "nested 51 levels deep"),
    "NaN response": ("NaN", "NaN is not valid JSON"),
    "Infinity": ("Infinity", "Infinity is not valid JSON"),
    "5,000-digit integer": ("9" * 5000, "not valid JSON"),
    "raw control character": ('"a\x1bb"', "control character U+001B"),
    "unpaired surrogate escape": ('"\\ud800"', "unpaired surrogate U+D800"),
    "bidi override": (None, None),
}


@pytest.mark.parametrize("case", [c for c, (v, _) in REJECTED.items() if v is not None])
def test_a_hostile_line_is_one_named_error_and_the_others_still_read(
    project: Project, case: str
) -> None:
    value, message = REJECTED[case]
    assert value is not None and message is not None
    lines = [json.dumps(line) for line in good_lines()]
    lines[1] = LINE % (QUESTION_IDS[1], value)
    folder = project.write("acme", multimodal="\n".join(lines) + "\n")
    project.write("other")  # the copy check reads acme as "another submission" too
    report = pipeline.validate(GamutProject(project.cfg))
    errors = [p for p in report.errors if p.file == "submissions/acme/multimodal.jsonl"]
    assert errors and errors[0].line == 2 and message in errors[0].message, report.to_text()
    assert report.rejected == ["acme"]  # "other" is validated in the same run, unharmed
    _, problems = read_responses(folder / "multimodal.jsonl")
    assert problems and problems[0].line == 2 and message in problems[0].message


def test_json_report_of_a_deep_file_is_complete(project: Project) -> None:
    project.write("acme", multimodal="[" * 100_000 + "]" * 100_000 + "\n")
    result = CliRunner().invoke(
        main, ["submission", "validate", "--config", str(project.root / "gamut.toml"),
               "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["n_errors"] >= 1 and "nested" in report["problems"][0]["message"]


def test_a_line_over_the_line_limit_is_rejected_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": "' + b"x" * (2 * 1024 * 1024) + b'"}\n{"a": 1}\n')
    read = read_jsonl(path, "x.jsonl", "fix")
    assert [p.line for p in read.problems] == [1] and "over the 1.0 MB limit" in read.problems[
        0
    ].message
    assert [line.value for line in read.lines] == [{"a": 1}]


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth(b'{"a": "[[[[[[{{{{"}') == 1
    assert json_depth(b'{"a": "\\"[[["}') == 1
    assert json_depth(b"[[[]]]") == 3


_JSON = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\a'),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(alphabet='[]{}"a'), inner),
    max_leaves=40,
)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, list):
        return 0
    return 1 + max(map(_depth, value), default=0)


@given(_JSON)
def test_json_depth_is_the_depth_of_the_parsed_value(value: object) -> None:
    raw = json.dumps(value).encode()
    if raw.count(b"[") + raw.count(b"{") <= 1:  # json_depth counts a single bracket as is
        assert _depth(value) <= json_depth(raw)
        return
    assert json_depth(raw) == _depth(value)


def test_a_line_of_many_brackets_is_read_by_its_depth_not_its_count() -> None:
    limits = JsonlLimits()
    wide = b"[" + b",".join([b"[[1]]"] * (4 * MAX_DEPTH)) + b"]"  # many brackets, 3 deep
    assert parse_line(wide, limits) == (json.loads(wide), None)
    for depth in (MAX_DEPTH + 1, 1000, 5000):  # orjson reads 1,000 levels, refuses 5,000
        deep = b"[" * depth + b"]" * depth
        assert parse_line(deep, limits) == (
            None,
            f"nested {depth} levels deep (at most {MAX_DEPTH})",
        )
    at_cap = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert parse_line(at_cap, limits)[1] is None


def test_the_writer_writes_what_every_line_splitter_keeps_whole() -> None:
    line = dumps_line({"question_id": "q", "response": "a\u2028b\u2029c é"})
    assert len(line.splitlines()) == 1 and "é" in line
    assert json.loads(line)["response"] == "a\u2028b\u2029c é"


def test_the_fast_writer_writes_the_same_values_and_what_orjson_cannot() -> None:
    """orjson's lines (request files): U+2028/2029 escaped like the standard writer's lines;
    a lone surrogate and an integer beyond 64 bits by the standard library, escaped."""
    from scoring.fastjson import dumps_line as fast_line

    for value in ("a\u2028b\u2029c é \U0001f35c", "lone \ud800 x", 1 << 70, {"t": 0.0, "q": '"\\'}):
        data = fast_line({"v": value})
        assert json.loads(data) == {"v": value}
        assert len(data.decode().splitlines()) == 1
    assert fast_line("é") == '"é"'.encode() and fast_line("\u2028") == b'"\\u2028"'


# -- metadata ------------------------------------------------------------------------------------

BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_a_yaml_alias_bomb_is_rejected_before_anything_is_expanded(project: Project) -> None:
    folder = project.write("acme", meta=BOMB)
    assert len(BOMB) < 1024  # 9**9 strings once expanded
    meta, problems = check_metadata(folder / "submission.yaml", "submission.yaml")
    assert meta is None
    assert [(p.line, p.message) for p in problems] == [
        (1, "YAML anchors and aliases (&name, *name) are not allowed")
    ]


@pytest.mark.parametrize(
    "text,line",
    [
        ("model_name: " + "[" * 20_000 + "]" * 20_000 + "\n", 1),
        ("model_name: x\nnotes:\n" + "".join("  " * i + "-\n" for i in range(1, 12)), 11),
        ("model_name: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", 1),
    ],
    ids=["flow sequences 20,000 deep", "block sequences", "flow mappings 5,000 deep"],
)
def test_deep_yaml_is_a_named_error_with_its_line(project: Project, text: str, line: int) -> None:
    folder = project.write("acme", meta=text)
    meta, problems = check_metadata(folder / "submission.yaml", "submission.yaml")
    assert meta is None
    assert problems[0].message.startswith("nested more than")
    assert problems[0].line is not None and problems[0].line <= line


@pytest.mark.parametrize(
    "value,code",
    [
        ("Acme\x1b[31m VL", "U+001B"),  # ESC (via a YAML escape)
        ("Acme\x07 VL", "U+0007"),  # BEL
        ("Acme\u202eLV 2", "U+202E"),  # right-to-left override: displays "Acme2 VL"
        ("Ac\u200bme VL", "U+200B"),  # zero-width space
        ("Acme\u2066 VL", "U+2066"),  # isolate
        ("Acme\ufeff VL", "U+FEFF"),
        ("Acme\nVL", "U+000A"),  # a one-line field
    ],
)
def test_invisible_and_control_characters_in_metadata_are_rejected_with_their_line(
    project: Project, value: str, code: str
) -> None:
    meta = {**GOOD_META, "model_name": value}
    folder = project.write("acme", meta=json.dumps(meta))  # JSON is YAML; escapes kept
    _, problems = check_metadata(folder / "submission.yaml", "s.yaml")
    (p,) = [p for p in problems if "model_name" in p.message]
    assert p.line == 1 and code in p.message and p.file == "s.yaml"


def test_notes_may_span_lines_but_not_hide_characters(project: Project) -> None:
    meta = {**GOOD_META, "production": {**GOOD_META["production"], "notes": "line one\nline two"}}
    folder = project.write("acme", meta=meta)
    assert check_metadata(folder / "submission.yaml", "s.yaml")[1] == []
    meta["production"]["notes"] = "line one\u202e"
    folder = project.write("acme", meta=meta)
    (p,) = check_metadata(folder / "submission.yaml", "s.yaml")[1]
    assert "production.notes" in p.message and "U+202E" in p.message


# -- command line and PR steps -------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.mark.parametrize("ref", ["--output=OUT", "-p", "--no-index", "main --output=OUT", ""])
def test_changed_from_is_never_an_option_to_git(project: Project, ref: str) -> None:
    _git(project.root, "init", "-q", "-b", "main")
    _git(project.root, "config", "user.email", "t@example.org")
    _git(project.root, "config", "user.name", "t")
    project.write("existing")
    _git(project.root, "add", ".")
    _git(project.root, "commit", "-q", "-m", "base")
    out = project.root / "OUT"
    report = pipeline.validate(GamutProject(project.cfg), changed_from=ref.replace("OUT", str(out)))
    assert not report.ok
    assert not list(project.root.glob("OUT*")) and not list(Path.cwd().glob("OUT*"))
    assert report.errors[0].file.startswith("--changed-from")


def test_annotations_are_capped_and_the_rest_summarised() -> None:
    from gamut.pr import MAX_ANNOTATIONS, annotate

    report = {
        "ok": False,
        "submissions": ["junk"],
        "problems": [
            {"file": f"submissions/junk/f{i}", "line": None, "severity": "error",
             "message": "unexpected file", "fix": "remove it"}
            for i in range(20_000)
        ],
    }  # fmt: skip
    result = annotate(report)
    lines, md = result.commands, result.summary
    assert len(lines) == MAX_ANNOTATIONS + 1 and all(x.startswith("::error ") for x in lines)
    assert "19970 more problem(s) not annotated" in lines[-1]
    assert md.count("\n| error |") == 200 and "... and 19800 more." in md


def test_a_flood_of_bad_lines_lists_the_first_problems_and_counts_the_rest(
    project: Project,
) -> None:
    from scoring.submissions.responses import MAX_PROBLEMS_PER_FILE

    body = "".join(
        json.dumps({"question_id": f"x-{i}", "response": "r"}) + "\n" for i in range(5000)
    )
    project.write("acme", multimodal=body)
    report = pipeline.validate(GamutProject(project.cfg))
    mine = [p for p in report.problems if p.file == "submissions/acme/multimodal.jsonl"]
    assert len(mine) == MAX_PROBLEMS_PER_FILE + 2  # the listed ones, the count, the absent ids
    assert mine[MAX_PROBLEMS_PER_FILE].message == (
        f"{5000 - MAX_PROBLEMS_PER_FILE} more problem(s) in this file are not listed"
    )
    assert "have no response" in mine[-1].message


def test_a_folder_of_junk_files_lists_fifty_and_counts_the_rest(project: Project) -> None:
    from scoring.submissions.layout import MAX_LISTED_ENTRIES

    folder = project.write("acme")
    for i in range(300):
        (folder / f"junk{i:03d}.txt").write_bytes(b"")
    report = pipeline.validate(GamutProject(project.cfg))
    junk = [p for p in report.errors if "unexpected" in p.message]
    assert len(junk) == MAX_LISTED_ENTRIES + 1
    assert junk[-1].message == f"{300 - MAX_LISTED_ENTRIES} more unexpected entries are not listed"
    assert report.submissions == ["acme"]  # its real files were still read: no "missing" error
    assert not any("missing" in p.message for p in report.errors)
