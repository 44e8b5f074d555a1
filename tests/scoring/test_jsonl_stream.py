"""The one JSON Lines reader, streamed: the same lines and problems as a whole read, a block at a
time, with a stop after ``max_problems``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import scoring.jsonl as jsonl
from scoring.errors import Problem
from scoring.jsonl import JsonlLimits, read_jsonl


def _read(path: Path, stream: bool, **kw: object) -> tuple[list[tuple[int, object]], list[str]]:
    problems: list[Problem] = []
    read = read_jsonl(path, "f", "fix", report=problems.append, stream=stream, **kw)  # type: ignore[arg-type]
    lines = [(x.line, x.value) for x in read.lines]
    return lines, [f"{p.line}: {p.message}" for p in problems]


@pytest.mark.parametrize("blank_lines", [True, False])
def test_a_streamed_read_is_a_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blank_lines: bool
) -> None:
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 7)  # lines across many block boundaries
    rng = random.Random(7)
    path = tmp_path / "x.jsonl"
    pieces = [b'{"a": 1}', b"[1, [2]]", b"  ", b"", b"\r", b"nope", b'"\\u2028"', b"[[[[[1]]]]]"]
    for _ in range(300):
        data = b"\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        path.write_bytes(data + rng.choice([b"", b"\n", b"\r\n"]))
        if (blank_lines and data.isspace()) or not data:
            continue  # a file of nothing but blank lines: a whole read calls it empty only
        limits = JsonlLimits(max_depth=4)
        whole = _read(path, False, limits=limits, blank_lines=blank_lines)
        assert _read(path, True, limits=limits, blank_lines=blank_lines) == whole, data


def test_a_streamed_read_skips_a_long_line_unread_and_stops_at_max_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 64)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"1\n" + b"x" * 1000 + b"\n2\n" + b"bad\n" * 10 + b"3")
    limits = JsonlLimits(max_line_bytes=100, max_problems=4)
    problems: list[Problem] = []
    read = read_jsonl(path, "f", "fix", limits, report=problems.append, stream=True)
    assert [x.value for x in read.lines] == [1, 2]
    assert [p.line for p in problems] == [2, 4, 5, 6]
    assert "line is 1.0 KB, over the 0.1 KB limit" in problems[0].message
    assert read.stopped_at == 6 and read.unterminated is None
    read = read_jsonl(path, "f", "fix", JsonlLimits(max_line_bytes=100), report=[].append,
                      stream=True)  # fmt: skip
    assert [x.value for x in read.lines] == [1, 2, 3] and read.unterminated == 14


def test_a_streamed_read_reads_nothing_past_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"1\n" * 100)
    problems: list[Problem] = []
    read = read_jsonl(path, "f", "fix", JsonlLimits(max_file_bytes=50), report=problems.append,
                      stream=True)  # fmt: skip
    assert read.unreadable and not list(read.lines) and "over the" in problems[0].message
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n" * 5000 + b" \n")
    read = read_jsonl(blank, "f", "fix", blank_lines=False, report=problems.append, stream=True)
    assert not list(read.lines) and read.empty
