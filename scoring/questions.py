"""The public questions file (docs/contract.md §1): one question a line, JSON Lines."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from scoring.errors import Problem, ProblemsError
from scoring.rubric import Identifier, NonEmpty


class Setting(StrEnum):
    """The two ways a question is put to a model."""

    MULTIMODAL = "multimodal"
    TEXT_ONLY = "text_only"


class Popularity(StrEnum):
    """How well known the depicted entity is."""

    HEAD = "head"
    TORSO = "torso"
    TAIL = "tail"


class Question(BaseModel):
    """One public question: an image and the two forms of the question about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question_id: Identifier
    image_id: Identifier
    image: str | None = Field(
        description="Path (relative to the questions file) or http(s) URL of the image, or null."
    )
    domain: NonEmpty
    popularity: Popularity
    egocentric: StrictBool
    question: NonEmpty
    text_only_question: NonEmpty

    def prompt(self, setting: Setting) -> str:
        """The question text in the given setting's form."""
        return self.question if setting is Setting.MULTIMODAL else self.text_only_question


def load_questions(path: Path) -> list[Question]:
    """Read and validate a questions file, reporting every bad line at once.

    Raises:
        ProblemsError: with file, line and fix for each problem (including duplicate ids).
    """
    problems: list[Problem] = []
    out: list[Question] = []
    seen: dict[str, int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemsError(
            [
                Problem(
                    str(path),
                    None,
                    f"cannot read: {exc}",
                    "check [benchmark] questions in the config",
                )
            ]
        ) from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = Question.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(
                    str(path), n, f"not valid JSON: {exc.msg}", "write one JSON object per line"
                )
            )
            continue
        except ValidationError as exc:
            for e in exc.errors(include_url=False):
                field = ".".join(str(p) for p in e["loc"])
                problems.append(
                    Problem(
                        str(path),
                        n,
                        f"{field}: {e['msg']}",
                        "see docs/contract.md §1 for the question fields",
                    )
                )
            continue
        if q.question_id in seen:
            problems.append(
                Problem(
                    str(path),
                    n,
                    f"duplicate question_id {q.question_id!r} "
                    f"(first on line {seen[q.question_id]})",
                    "give every question a unique id",
                )
            )
            continue
        seen[q.question_id] = n
        out.append(q)
    if not out and not problems:
        problems.append(Problem(str(path), None, "no questions", "add one JSON object per line"))
    if problems:
        raise ProblemsError(problems, f"invalid questions file {path}")
    return out


__all__ = ["Popularity", "Question", "Setting", "load_questions"]
