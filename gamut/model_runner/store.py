"""A crash-safe, append-only response file (``<setting>.jsonl``).

Each answer is one ``write`` of a complete line, then ``fsync``; :meth:`ResponseFile.open` cuts
away the one torn last line a killed process can leave.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from pathlib import Path

from scoring.errors import Problem
from scoring.jsonl import JsonlLimits, dumps_line, parse_line, split_lines


def _repair_tail(path: Path) -> int:
    """Truncate a torn last line (no trailing newline); return the number of bytes cut."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb") as f:
        # Scan backwards for the last newline without reading a large file whole.
        pos, block = size, 1 << 16
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            pos = start
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, keep)
        os.fsync(fd)
    finally:
        os.close(fd)
    return size - keep


class ResponseFile:
    """The responses of one submission in one setting, opened for appending."""

    def __init__(self, path: Path, answered: set[str], repaired_bytes: int) -> None:
        self.path = path
        self.answered = answered
        self.repaired_bytes = repaired_bytes
        self._fd = -1  # opened (and the file created) on the first answer
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls, path: Path, known_ids: Collection[str]
    ) -> tuple[ResponseFile | None, list[Problem]]:
        """Read an existing response file, repairing a torn tail first."""
        repaired = _repair_tail(path) if path.exists() else 0
        answered: dict[str, int] = {}
        problems: list[Problem] = []
        if path.exists():
            # the validator's line splitting and parser, so what is resumed here validates
            for n, raw in split_lines(path.read_bytes()):
                if raw.strip():
                    problems.extend(_check_line(path, n, raw, answered, known_ids))
        if problems:
            return None, problems
        return cls(path, set(answered), repaired), []

    def append(self, question_id: str, response: str) -> bool:
        """Append one answer as a single complete line, flushed to disk."""
        return self.append_many([(question_id, response, None)]) == [question_id]

    def append_many(self, answers: list[tuple[str, str, tuple[int, int] | None]]) -> list[str]:
        """Append answers (question id, response, reported (input, output) tokens or None), each one
        ``write`` of a complete line, then one ``fsync``."""
        for qid, response, _ in answers:
            if not response.strip():
                raise ValueError(f"refusing to write an empty response for {qid}")
        written_ids: list[str] = []
        with self._lock:
            for qid, response, usage in answers:
                if qid in self.answered or qid in written_ids:
                    continue
                record: dict[str, object] = {"question_id": qid, "response": response}
                if usage is not None:
                    record["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
                line = dumps_line(record)
                self._write((line + "\n").encode("utf-8"))
                written_ids.append(qid)
            if written_ids:
                os.fsync(self._fd)
                self.answered.update(written_ids)
        return written_ids

    def _write(self, data: bytes) -> None:
        if self._fd < 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        written = os.write(self._fd, data)
        while written < len(data):  # a short write on a full disk or a signal
            written += os.write(self._fd, data[written:])

    def close(self) -> None:
        """Close the file descriptor (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _check_line(
    path: Path, n: int, raw: bytes, answered: dict[str, int], known_ids: Collection[str]
) -> list[Problem]:
    def bad(message: str, fix: str, qid: str | None = None) -> list[Problem]:
        return [Problem(str(path), n, message, fix, question_id=qid)]

    obj, wrong = parse_line(raw, JsonlLimits())
    if wrong is not None:
        return bad(wrong, "delete the line and rerun")
    if (
        not isinstance(obj, dict)
        or not isinstance(obj.get("question_id"), str)
        or not isinstance(obj.get("response"), str)
    ):
        return bad(
            'expected {"question_id": "...", "response": "..."}', "delete the line and rerun"
        )
    qid: str = obj["question_id"]
    if qid not in known_ids:
        return bad(f"unknown question_id {qid!r}", "delete the line", qid)
    if qid in answered:
        first = answered[qid]
        return bad(
            f"duplicate question_id {qid!r} (first on line {first})", "keep one of the lines", qid
        )
    answered[qid] = n
    if not obj["response"].strip():
        return bad("empty response", "delete the line and rerun to answer it", qid)
    return []
