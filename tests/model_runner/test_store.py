"""The response file: complete lines only, a torn tail cut away, never a duplicate id."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamut.model_runner.store import ResponseFile

IDS = {f"q{i}" for i in range(50)}


def _open(path: Path) -> ResponseFile:
    f, problems = ResponseFile.open(path, IDS)
    assert problems == [] and f is not None
    return f


def test_appends_complete_lines_and_skips_answered(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "multimodal.jsonl"
    f = _open(path)
    assert f.append("q1", "first line\nsecond line, ünïcode")
    assert not f.append("q1", "again")
    f.close()
    f = _open(path)
    assert f.answered == {"q1"}
    assert f.append("q2", "x")
    f.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["question_id"] for x in lines] == ["q1", "q2"]
    assert json.loads(lines[0])["response"] == "first line\nsecond line, ünïcode"


def test_an_empty_response_is_never_written(tmp_path: Path) -> None:
    f = _open(tmp_path / "r.jsonl")
    with pytest.raises(ValueError, match="empty"):
        f.append("q1", "  \n ")
    f.close()
    assert not (tmp_path / "r.jsonl").exists()


def test_a_torn_last_line_is_cut_away(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    good = '{"question_id": "q1", "response": "a"}\n'
    path.write_text(good + '{"question_id": "q2", "resp', encoding="utf-8")
    f = _open(path)
    assert f.repaired_bytes == len('{"question_id": "q2", "resp')
    assert f.answered == {"q1"}
    f.append("q2", "b")
    f.close()
    assert path.read_text(encoding="utf-8").splitlines()[1] == (
        '{"question_id": "q2", "response": "b"}'
    )


@settings(max_examples=60)
@given(n=st.integers(1, 8), cut=st.integers(0, 10_000), text=st.text(min_size=1, max_size=40))
def test_any_kill_point_leaves_a_prefix_of_complete_lines(
    tmp_path_factory: pytest.TempPathFactory, n: int, cut: int, text: str
) -> None:
    """Cut a valid file at any byte (as a kill mid-write would); reopening keeps whole lines."""
    if not text.strip():
        text = "x" + text
    path = tmp_path_factory.mktemp("cut") / "r.jsonl"
    full = "".join(
        json.dumps({"question_id": f"q{i}", "response": text}, ensure_ascii=False) + "\n"
        for i in range(n)
    ).encode()
    cut = cut % (len(full) + 1)
    path.write_bytes(full[:cut])
    f = _open(path)
    f.close()
    data = path.read_bytes()
    assert full.startswith(data) and (data == b"" or data.endswith(b"\n"))
    assert len(f.answered) == data.count(b"\n")


def test_existing_problems_are_all_listed_and_the_file_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    content = (
        '{"question_id": "q1", "response": "a"}\n'
        "not json\n"
        '{"question_id": "q1", "response": "again"}\n'
        '{"question_id": "nope", "response": "b"}\n'
        '{"question_id": "q3", "response": "  "}\n'
        '["a list"]\n'
    )
    path.write_text(content, encoding="utf-8")
    f, problems = ResponseFile.open(path, IDS)
    assert f is None
    assert [p.line for p in problems] == [2, 3, 4, 5, 6]
    assert all(p.fix and p.file == str(path) for p in problems)
    assert path.read_text(encoding="utf-8") == content


def test_concurrent_appends_from_threads_never_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    f = _open(path)
    ids = sorted(IDS)

    def work() -> None:
        for qid in ids:
            f.append(qid, f"answer {qid}")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    f.close()
    got = [json.loads(x)["question_id"] for x in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(got) == ids
