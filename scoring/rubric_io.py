"""Reading meta-rubrics from files and folders, and linting them (every problem at once)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scoring.compiler import Check, compile_rubric
from scoring.errors import Problem, RubricError
from scoring.jsonl import JsonlLimits, read_jsonl, size_text, validated
from scoring.rubric import MetaRubric
from scoring.storage import open_regular


@dataclass(frozen=True)
class RubricSource:
    """A validated rubric and where it came from."""

    rubric: MetaRubric
    file: str
    line: int | None


#: What counts as a rubric file inside a rubrics folder.
RUBRIC_SUFFIXES = frozenset({".json", ".jsonl"})


def rubric_files(path: Path) -> list[Path]:
    """The rubric files at ``path``: everything named ``*.json``/``*.jsonl`` under a folder but
    a folder, sorted (a name that holds no regular file is refused by name when read), or the
    path itself when it is not a folder."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in RUBRIC_SUFFIXES and not p.is_dir())
    return [path]


#: What a rubric ``.jsonl`` file may hold (bytes): read like every JSON Lines file
#: (ARCHITECTURE.md, "Hostile input"), with room for a whole rubric set in one file.
MAX_RUBRIC_FILE_BYTES = 256 * 1024 * 1024
MAX_RUBRIC_LINE_BYTES = 8 * 1024 * 1024
_SPLIT = "split the rubrics into several files"


def _objects(path: Path, problems: list[Problem]) -> Iterable[tuple[int | None, Any]]:
    """``(line, object)`` for each rubric object of one file, its problems put in ``problems``.

    A ``.jsonl`` file is read by the one JSON Lines reader (lines end at ``\\n`` only, so a
    U+2028 inside a string is text; blank lines skipped), its objects and problems in line
    order; a ``.json`` file holds one object or a list of them."""
    limits = JsonlLimits(MAX_RUBRIC_FILE_BYTES, MAX_RUBRIC_LINE_BYTES)
    if path.suffix == ".jsonl":
        return read_jsonl(
            path,
            str(path),
            "write one rubric object per line",
            limits,
            blank_lines=False,
            what="a rubric file",
            size_fix=_SPLIT,
            report=problems.append,
            links=True,  # a Hub snapshot's files are links into its cache
        ).lines
    line, fix = None, "pass a readable UTF-8 .json or .jsonl file or a folder"
    try:
        with open_regular(path, links=True) as f:
            data = f.read(limits.max_file_bytes + 1)
        if len(data) > limits.max_file_bytes:
            msg, fix = f"file is over the {size_text(limits.max_file_bytes)} limit", _SPLIT
        else:
            obj = json.loads(data.decode("utf-8"))
            return [(None, o) for o in (obj if isinstance(obj, list) else [obj])]
    except OSError as exc:
        msg = f"cannot read: {exc.strerror}"
    except UnicodeDecodeError as exc:
        msg = f"cannot read: {exc}"
    except RecursionError:
        msg, fix = "nested too deeply", "flatten the object"
    except json.JSONDecodeError as exc:
        line, msg, fix = exc.lineno, f"not valid JSON: {exc.msg}", "fix the JSON syntax"
    problems.append(Problem(str(path), line, msg, fix))
    return []


def _rubric(obj: Any) -> MetaRubric:
    if not isinstance(obj, dict):
        fix = "see docs/contract.md §3 for the format"
        raise RubricError([Problem("", None, "a rubric must be a JSON object", fix)])
    return MetaRubric.model_validate(obj)


def read_rubrics(paths: Iterable[Path]) -> tuple[list[RubricSource], list[Problem]]:
    """Read every rubric under ``paths``; return the valid ones and every problem found."""
    good: list[RubricSource] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for root in paths:
        if not root.exists():
            fix = "check the path (rubrics live in .json/.jsonl files)"
            problems.append(Problem(str(root), None, "no such file or folder", fix))
            continue
        for f in rubric_files(root):
            fix = "see docs/contract.md §3 for the format"
            for line, rubric in validated(_objects(f, problems), _rubric, str(f), fix, problems):
                where = f"{f}" + (f":{line}" if line else "")
                qid = rubric.question_id
                if qid in seen:
                    again = f"a second rubric for question {qid!r} (first in {seen[qid]})"
                    problems.append(
                        Problem(str(f), line, again, "keep one rubric per question", qid)
                    )
                    continue
                seen[rubric.question_id] = where
                good.append(RubricSource(rubric, str(f), line))
    return good, problems


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_ID_LIKE = re.compile(r"""['"][A-Za-z0-9_.-]{1,40}['"]""")


def held_problem(p: Problem) -> Problem:
    """``p`` with any rubric text left out: the question, item and rule stay.

    Rubric text reaches a message only as a quoted value or after ``repeated:``; ids (short,
    without spaces) are kept, anything else quoted becomes ``'...'``.
    """
    message = p.message.split("; repeated:", 1)[0]
    if message != p.message:
        message += " (the repeated values are not shown: the rubrics are held)"
    message = _QUOTED.sub(lambda m: m[0] if _ID_LIKE.fullmatch(m[0]) else "'...'", message)
    return replace(p, message=message)


def load_rubrics(paths: Iterable[Path], held: bool = False) -> dict[str, MetaRubric]:
    """Load and validate rubrics by question id; ``held``: problems never quote rubric text.

    Raises:
        RubricError: listing every problem in every file.
    """
    good, problems = read_rubrics(paths)
    if problems:
        if held:
            problems = [held_problem(p) for p in problems]
        raise RubricError(problems, f"{len(problems)} problem(s) in the rubrics")
    return {s.rubric.question_id: s.rubric for s in good}


def lint_warnings(source: RubricSource) -> list[Problem]:
    """Advisory problems: items that cite no snippet, snippets that no item cites."""
    r = source.rubric

    def warn(message: str, fix: str, item: str | None = None) -> Problem:
        return Problem(source.file, source.line, message, fix, r.question_id, item, "warning")

    ground = "ground it: add the id of a supporting snippet to 'cites'"
    out = [warn("item cites no snippet", ground, i.id) for i in r.items if not i.cites]
    cited = {c for i in r.items for c in i.cites}
    uncited = "cite it from the item it supports, or remove it"
    return out + [
        warn(f"snippet {s.id} is never cited", uncited) for s in r.snippets if s.id not in cited
    ]


def compile_all(rubrics: dict[str, MetaRubric]) -> dict[str, list[Check]]:
    """Compile every rubric, keyed by question id."""
    return {qid: compile_rubric(r) for qid, r in rubrics.items()}


def rubric_set_version(rubrics: dict[str, MetaRubric]) -> str:
    """Content hash of a rubric set: changes whenever any rubric's content changes."""
    h = hashlib.sha256()
    for qid in sorted(rubrics):
        h.update(rubrics[qid].model_dump_json(exclude_none=True).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()[:16]
