"""The public questions file (docs/contract.md §1): one question a line, JSON Lines."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from scoring.errors import Problem, ProblemsError
from scoring.jsonl import JsonlLimits, read_jsonl, validated
from scoring.rubric import Identifier, NonEmpty

#: What a questions file may hold (bytes): read like every JSON Lines file (ARCHITECTURE.md,
#: "Hostile input"), with room for a large public set.
MAX_QUESTIONS_FILE_BYTES = 64 * 1024 * 1024
MAX_QUESTION_LINE_BYTES = 1024 * 1024


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
    """Read and validate a questions file with the one JSON Lines reader, every bad line at once.

    Raises:
        ProblemsError: with file, line and fix for each problem (including duplicate ids).
    """
    problems: list[Problem] = []
    out: list[Question] = []
    seen: dict[str, int | None] = {}
    fix = "write one question object per line (docs/contract.md §1 gives the fields)"
    read = read_jsonl(
        path,
        str(path),
        fix,
        JsonlLimits(MAX_QUESTIONS_FILE_BYTES, MAX_QUESTION_LINE_BYTES),
        blank_lines=False,
        what="a questions file",
        size_fix="split the questions or check [benchmark] questions in the config",
        report=problems.append,
        links=True,  # the config names it; a Hub snapshot keeps it as a link into its cache
    )
    for n, q in validated(read.lines, Question.model_validate, str(path), fix, problems):
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
    if not out and not problems:  # an empty file, or one of blank lines
        problems.append(Problem(str(path), None, "no questions", "add one JSON object per line"))
    if problems:
        raise ProblemsError(problems, f"invalid questions file {path}")
    return out


__all__ = ["Popularity", "Question", "Setting", "load_questions"]
