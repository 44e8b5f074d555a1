"""Named exceptions of the engine. The CLI turns each into one clean message and exit code 1."""

from __future__ import annotations

from dataclasses import dataclass


class GamutError(Exception):
    """Base class of every error the engine raises on bad input or configuration."""


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file: where it is, what is wrong, and how to fix it."""

    file: str
    line: int | None
    message: str
    fix: str = ""
    question_id: str | None = None
    item_id: str | None = None
    severity: str = "error"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where + ":"]
        if self.question_id:
            who = f"question {self.question_id}" + (
                f", item {self.item_id}" if self.item_id else ""
            )
            parts.append(who + ":")
        if self.severity != "error":
            parts.append(f"{self.severity}:")
        parts.append(self.message)
        text = " ".join(parts)
        return f"{text} ({self.fix})" if self.fix else text


class ProblemsError(GamutError):
    """Raised with every problem found in one pass, never just the first."""

    def __init__(self, problems: list[Problem], summary: str = "") -> None:
        self.problems = problems
        self.summary = summary or f"{len(problems)} problem(s) found"
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.summary + ":\n" + "\n".join(f"  {p}" for p in self.problems)


class RubricError(ProblemsError):
    """A meta-rubric breaks a rule of docs/contract.md §3."""


class ScoringError(GamutError):
    """Verdicts cannot be scored: a check lacks a verdict, or a verdict is unknown."""


class ConfigError(ProblemsError):
    """The project configuration (gamut.toml) is invalid."""


__all__ = ["ConfigError", "GamutError", "Problem", "ProblemsError", "RubricError", "ScoringError"]
