"""What the judge judges: questions, compiled checks and submission responses, joined up."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.compiler import Check
from scoring.errors import Problem, ProblemsError
from scoring.layout import SubmissionsLayout
from scoring.questions import Question, Setting
from scoring.submissions.responses import read_responses


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


def list_submissions(root: Path) -> list[str]:
    """Submission ids: the folders under ``root`` that hold at least one response file."""
    return [f.id for f in SubmissionsLayout(root).folders() if f.has_responses()]


def response_units(
    questions: Iterable[Question],
    checks: Mapping[str, Sequence[Check]],
    root: Path,
    submissions: Iterable[str] | None = None,
    settings: Iterable[Setting] | None = None,
) -> JudgeInputs:
    """Join questions, compiled checks and responses into units."""
    by_id: dict[str, Question] = {q.question_id: q for q in questions}
    layout = SubmissionsLayout(root)
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
    shared = {qid: tuple(cs) for qid, cs in checks.items() if cs}  # one tuple per question
    units: list[ResponseUnit] = []
    problems: list[Problem] = []
    for sid in wanted:
        for setting in setting_list:
            path = layout.responses(sid, setting)
            if not path.is_file():
                continue
            responses, bad = read_responses(path)
            problems.extend(bad)
            for qid, text in responses.items():
                q = by_id.get(qid)
                cs = shared.get(qid)
                if q is None or cs is None:
                    continue
                units.append(ResponseUnit(sid, setting, qid, q.prompt(setting), text, cs))
    if problems:
        raise ProblemsError(problems, f"{len(problems)} problem(s) in the response files")
    return JudgeInputs(units, wanted)
