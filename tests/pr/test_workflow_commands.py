"""GitHub workflow commands written by hand: escaped as GitHub's runner unescapes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamut.workflow_commands import annotation, append_step_summary, escape_data


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    """Read a command as the runner's ActionCommand.TryParseV2 does: name, properties, data."""
    assert line.startswith("::") and "\n" not in line and "\r" not in line
    head, sep, data = line[2:].partition("::")
    assert sep
    name, _, props = head.partition(" ")
    out = {}
    for pair in filter(None, props.split(",")):
        key, eq, value = pair.partition("=")
        assert eq, pair
        out[key] = _unescape(value, prop=True)
    return name, out, _unescape(data, prop=False)


def _unescape(s: str, *, prop: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for code, char in [*pairs, ("%25", "%")]:  # the runner unescapes %25 last
        s = s.replace(code, char)
    return s


@pytest.mark.parametrize(
    ("message", "file"),
    [
        ("plain", "submissions/m/multimodal.jsonl"),
        ("100% sure\r\nsecond line", "a,line=99::x"),
        ("already %0A escaped and %25", "dir:with:colons/f,1.jsonl"),
        ("::error::nested", "%2C"),
    ],
)
def test_an_annotation_reads_back_as_written(message: str, file: str) -> None:
    line = annotation("error", message, title="T, with: separators", file=file, line=7)
    name, props, data = _parse(line)
    assert name == "error"
    assert props == {"title": "T, with: separators", "file": file, "line": "7"}
    assert data == message


def test_the_escapes_are_githubs() -> None:
    assert escape_data("50%\r\n") == "50%25%0D%0A"
    assert annotation("warning", "m", file="a:b,c") == "::warning file=a%3Ab%2Cc::m"
    assert annotation("notice", "m") == "::notice::m"


def test_the_summary_is_appended_only_when_the_runner_names_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_step_summary("# x") is False
    summary = tmp_path / "summary.md"
    summary.write_text("before\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert append_step_summary("# é") is True
    assert summary.read_text(encoding="utf-8") == "before\n# é\n"
