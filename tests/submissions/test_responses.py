"""Response files: every rule broken once, each reported with its message, file and line."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gamut import pipeline
from gamut.project import Project as GamutProject
from scoring.errors import Problem
from scoring.submissions import Limits
from tests.submissions.helpers import QUESTION_IDS, Project, good_lines, jsonl

MM = "submissions/acme/multimodal.jsonl"


def only(project: Project, **kw: object) -> list[Problem]:
    report = pipeline.validate(GamutProject(project.cfg), **kw)  # type: ignore[arg-type]
    return report.problems


def errors_in(problems: list[Problem], file: str = MM) -> list[Problem]:
    return [p for p in problems if p.severity == "error" and p.file == file]


def test_clean_submission_is_valid(project: Project) -> None:
    project.write("acme", text_only=good_lines())
    report = pipeline.validate(GamutProject(project.cfg))
    assert report.problems == []
    assert report.ok and report.submissions == ["acme"]


def test_empty_file(project: Project) -> None:
    project.write("acme", multimodal="")
    (err,) = errors_in(only(project))
    assert err.message.startswith("empty file") and err.line is None


def test_bom_is_rejected_with_a_clear_message(project: Project) -> None:
    folder = project.write("acme")
    path = folder / "multimodal.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (err,) = errors_in(only(project))
    assert "byte order mark" in err.message and err.line == 1
    assert "without a BOM" in err.fix


def test_utf16_file(project: Project) -> None:
    folder = project.write("acme")
    path = folder / "multimodal.jsonl"
    path.write_bytes(path.read_text().encode("utf-16"))
    (err,) = errors_in(only(project))
    assert "UTF-16" in err.message


def test_invalid_utf8_on_its_line(project: Project) -> None:
    lines = jsonl(good_lines()).encode().split(b"\n")
    lines[3] = lines[3].replace(b"Monstera", b"Mon\xffstera")
    folder = project.write("acme")
    (folder / "multimodal.jsonl").write_bytes(b"\n".join(lines))
    problems = errors_in(only(project))
    assert [(p.line, p.message.split(" (")[0]) for p in problems[:1]] == [(4, "not valid UTF-8")]
    # the undecodable line's question is then missing too
    assert "plants-0001" in problems[-1].message


def test_50_mb_file_is_rejected_without_reading_it(project: Project) -> None:
    folder = project.write("acme")
    path = folder / "multimodal.jsonl"
    with path.open("r+b") as f:
        f.truncate(50 * 1024 * 1024)  # sparse: instant, and mostly NUL bytes
    (err,) = errors_in(only(project))
    assert err.message == "file is 50.0 MB, over the 8.0 MB limit for a response file"


def test_per_response_size_limit(project: Project) -> None:
    lines = good_lines()
    lines[2]["response"] = "beans " * 6000
    project.write("acme", multimodal=lines)
    (err,) = errors_in(only(project))
    assert err.line == 3 and err.question_id == "food-0003"
    assert err.message == "response is 35.2 KB, over the 32.0 KB limit"


def test_the_size_limit_counts_bytes_not_characters(project: Project) -> None:
    # a 4-byte character: 8,192 of them fill the 32 KB limit exactly, one more is over it
    lines = good_lines()
    lines[0]["response"] = "\U0001f35c" * 8192
    lines[1]["response"] = "\U0001f35c" * 8193
    project.write("acme", multimodal=lines)
    (err,) = errors_in(only(project))
    assert (err.line, err.message) == (2, "response is 32.0 KB, over the 32.0 KB limit")


def test_limits_are_configurable(project: Project) -> None:
    project.write("acme")
    report = pipeline.validate(GamutProject(project.cfg), limits=Limits(max_response_bytes=100))
    assert {p.message.split(",")[0] for p in report.errors} == {"response is 0.2 KB"}


def test_not_json_not_an_object_and_keys(project: Project) -> None:
    lines = [json.dumps(r) for r in good_lines()]
    lines[0] = lines[0][:-1]  # truncated object
    lines[1] = json.dumps(["food-0002", "text"])
    lines[2] = json.dumps({"question_id": "food-0003", "response": "x", "model": "m"})
    lines[3] = json.dumps({"question_id": "plants-0001"})
    lines[4] = json.dumps({"question_id": "plants-0002", "response": None})
    lines[5] = json.dumps({"question_id": 7, "response": "x"})
    project.write("acme", multimodal="\n".join(lines) + "\n")
    got = {p.line: p.message for p in errors_in(only(project)) if p.line}
    assert got[1].startswith("not valid JSON: Expecting ',' delimiter")
    assert got[2] == "not a JSON object (found list)"
    assert got[3] == "unexpected key(s): 'model'"
    assert got[4] == "missing key(s): 'response'"
    assert got[5] == "response must be a string (found NoneType)"
    assert got[6] == "question_id must be a string (found 7)"


def test_unknown_duplicate_and_missing_ids_all_at_once(project: Project) -> None:
    lines = good_lines()
    lines[4] = {"question_id": "food-9999", "response": "a guess"}
    lines.append({"question_id": "food-0001", "response": "pad thai again"})
    project.write("acme", multimodal=lines)
    problems = errors_in(only(project))
    assert [(p.line, p.message) for p in problems] == [
        (5, "unknown question_id 'food-9999'"),
        (13, "question_id 'food-0001' answered again (first on line 1)"),
        (None, "1 multimodal question(s) have no response: plants-0002"),
    ]
    assert "gamut questions export" in problems[0].fix


def test_many_missing_ids_are_listed_briefly(project: Project) -> None:
    project.write("acme", multimodal=good_lines()[:1])
    (err,) = errors_in(only(project))
    assert err.message.startswith(f"{len(QUESTION_IDS) - 1} multimodal question(s)")
    assert err.message.endswith("and 1 more")


def test_control_characters(project: Project) -> None:
    lines = good_lines()
    lines[0]["response"] = "pad\x00thai"
    lines[1]["response"] = "bread\rwith cheese"
    lines[2]["response"] = "tab\tand\nnewline are fine"
    lines[3]["response"] = "lone \ud800 surrogate"
    project.write("acme", multimodal="".join(json.dumps(r) + "\n" for r in lines))
    got = {p.line: p.message for p in errors_in(only(project))}
    assert got == {
        1: "response contains control character U+0000 (character 4)",
        2: "response contains control character U+000D (character 6)",
        4: "response contains an unpaired surrogate U+D800 (character 6)",
    }


def test_raw_control_character_in_the_file(project: Project) -> None:
    text = jsonl(good_lines()).replace("stir-fried", "stir\x07fried")
    project.write("acme", multimodal=text)
    (err,) = errors_in(only(project))
    assert err.line == 1 and "U+0007" in err.message


def test_a_line_starting_with_a_byte_order_mark_is_named(project: Project) -> None:
    lines = jsonl(good_lines()).encode().split(b"\n")
    lines[2] = b"\xef\xbb\xbf" + lines[2]  # mid-file: the file's own BOM check does not see it
    folder = project.write("acme")
    (folder / "multimodal.jsonl").write_bytes(b"\n".join(lines))
    problems = errors_in(only(project))
    assert (problems[0].line, problems[0].message) == (
        3,
        "not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)",
    )


def test_lines_and_responses_of_whitespace_only(project: Project) -> None:
    text = jsonl(good_lines()).split("\n")
    text.insert(1, " \t\x0c")  # blank: spaces, a tab, a form feed
    project.write("acme", multimodal="\n".join(text))
    (err,) = errors_in(only(project))
    assert (err.line, err.message) == (2, "empty line")
    lines = good_lines()
    lines[0]["response"] = "\u2028 \u3000"  # line and ideographic spaces: empty too
    lines[1]["response"] = "\u200b"  # a zero-width space is not white space: a response
    project.write("acme", multimodal=lines)
    report = pipeline.validate(GamutProject(project.cfg))
    assert [(w.line, w.message.split(":")[0]) for w in report.warnings] == [(1, "empty response")]


def test_blank_line_and_crlf(project: Project) -> None:
    text = jsonl(good_lines()).replace("\n", "\r\n")
    lines = text.split("\r\n")
    lines.insert(2, "")
    project.write("acme", multimodal="\r\n".join(lines))
    (err,) = errors_in(only(project))
    assert (err.line, err.message) == (3, "empty line")


def test_empty_response_is_a_warning(project: Project) -> None:
    lines = good_lines()
    lines[6]["response"] = "  "
    project.write("acme", multimodal=lines)
    report = pipeline.validate(GamutProject(project.cfg))
    assert report.ok
    (w,) = report.warnings
    assert (w.line, w.question_id) == (7, "animals-0002")
    assert w.message.startswith("empty response")


def test_text_only_file_is_optional_but_checked(project: Project) -> None:
    project.write("acme", text_only=good_lines()[:-1])
    (err,) = errors_in(only(project), "submissions/acme/text_only.jsonl")
    assert err.message == "1 text_only question(s) have no response: products-0001"


def test_sparse_file_creation_is_cheap(tmp_path: Path) -> None:
    # guards the assumption of the 50 MB test: the file takes (almost) no disk space
    path = tmp_path / "big"
    with path.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    assert os.stat(path).st_size == 50 * 1024 * 1024
