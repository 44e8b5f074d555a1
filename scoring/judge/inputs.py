"""What the judge judges: questions, compiled checks and submission responses, joined up.

Submission responses are read with a minimal reader (``<submissions>/<id>/<setting>.jsonl``, lines
``{"question_id", "response"}``); full validation is ``gamut submission validate``'s job.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.compiler import Check
from scoring.errors import Problem, ProblemsError
from scoring.questions import Question, Setting


@dataclass(frozen=True, slots=True)
class ResponseUnit:
    """One response to judge against every check of its question."""

    submission_id: str
    setting: Setting
    question_id: str
    question: str
    response: str
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class JudgeInputs:
    """Everything the judge needs: the units, and the submissions and settings they cover."""

    units: list[ResponseUnit]
    submissions: list[str]


def read_responses(path: Path) -> tuple[dict[str, str], list[Problem]]:
    """Read one response file: question id -> response text, and every problem found."""
    out: dict[str, str] = {}
    problems: list[Problem] = []
    fix = 'write one JSON object per line: {"question_id": "...", "response": "..."}'
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return out, [Problem(str(path), None, f"cannot read: {exc}", "save it as UTF-8")]
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), n, f"not valid JSON: {exc.msg}", fix))
            continue
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("question_id"), str)
            or not isinstance(obj.get("response"), str)
        ):
            problems.append(
                Problem(str(path), n, "needs string fields question_id and response", fix)
            )
            continue
        qid = obj["question_id"]
        if qid in out:
            problems.append(
                Problem(str(path), n, f"second response for {qid!r}", "answer each question once")
            )
            continue
        out[qid] = obj["response"]
    return out, problems


def list_submissions(root: Path) -> list[str]:
    """Submission ids: the folders under ``root`` that hold at least one response file."""
    if not root.is_dir():
        return []
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and any((p / f"{s.value}.jsonl").is_file() for s in Setting)
    )


def response_units(
    questions: Iterable[Question],
    checks: Mapping[str, Sequence[Check]],
    root: Path,
    submissions: Iterable[str] | None = None,
    settings: Iterable[Setting] | None = None,
) -> JudgeInputs:
    """Join questions, compiled checks and responses into units.

    Args:
        questions: the public questions.
        checks: question id -> its compiled checks.
        root: the submissions folder.
        submissions: submission ids (default: every folder under ``root`` with a response file).
        settings: settings (default: both).

    Questions without a rubric, and responses to questions that are not in the questions file,
    have nothing to judge and are skipped.

    Raises:
        ProblemsError: unreadable questions, rubrics or response files (every problem at once),
            or an unknown submission id.
    """
    by_id: dict[str, Question] = {q.question_id: q for q in questions}
    known = list_submissions(root)
    wanted = known if submissions is None else list(dict.fromkeys(submissions))
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise ProblemsError(
            [
                Problem(
                    str(root), None, f"no submission {s!r}", f"one of: {', '.join(known) or 'none'}"
                )
                for s in unknown
            ],
            "unknown submission id(s)",
        )
    setting_list = list(Setting) if settings is None else list(dict.fromkeys(settings))
    units: list[ResponseUnit] = []
    problems: list[Problem] = []
    for sid in wanted:
        for setting in setting_list:
            path = root / sid / f"{setting.value}.jsonl"
            if not path.is_file():
                continue
            responses, bad = read_responses(path)
            problems.extend(bad)
            for qid, text in responses.items():
                q = by_id.get(qid)
                cs = checks.get(qid)
                if q is None or not cs:
                    continue
                units.append(ResponseUnit(sid, setting, qid, q.prompt(setting), text, tuple(cs)))
    if problems:
        raise ProblemsError(problems, f"{len(problems)} problem(s) in the response files")
    return JudgeInputs(units, wanted)


__all__ = [
    "JudgeInputs",
    "ResponseUnit",
    "list_submissions",
    "read_responses",
    "response_units",
]
