"""The validator's result: every problem found, errors and warnings together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoring.errors import Problem

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Limits:
    """Size limits of a response file and of one response (UTF-8 bytes)."""

    max_response_bytes: int = 32 * 1024
    max_file_bytes: int = 8 * 1024 * 1024


@dataclass
class ValidationReport:
    """Every problem found in the validated submissions, in order; ``rejected``: the validated ids
    with at least one error."""

    problems: list[Problem] = field(default_factory=list)
    submissions: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        """The problems that fail validation."""
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        """The problems worth a reviewer's look that do not fail validation."""
        return [p for p in self.problems if p.severity != ERROR]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    def summary(self) -> str:
        """One line: what was validated and how many errors and warnings were found."""
        ids = ", ".join(self.submissions) if self.submissions else "no submission"
        verdict = "valid" if self.ok else "INVALID"
        good = [s for s in self.submissions if s not in self.rejected]
        if not self.ok and self.rejected and good:  # name only the invalid ones as INVALID
            ids = f"{', '.join(self.rejected)} (valid: {', '.join(good)})"
        return f"{verdict}: {ids}; {len(self.errors)} error(s), {len(self.warnings)} warning(s)"

    def to_text(self) -> str:
        """Every problem as ``file:line: problem (fix)``, errors first, then the summary."""
        lines = [str(p) for p in self.errors] + [str(p) for p in self.warnings]
        return "\n".join([*lines, self.summary()]) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, for workflows that turn problems into annotations."""
        return {
            "ok": self.ok,
            "submissions": list(self.submissions),
            "rejected": list(self.rejected),
            "n_errors": len(self.errors),
            "n_warnings": len(self.warnings),
            "problems": [
                {
                    "file": p.file,
                    "line": p.line,
                    "severity": p.severity,
                    "message": p.message,
                    "fix": p.fix,
                    "question_id": p.question_id,
                    "text": str(p),
                }
                for p in self.problems
            ],
        }
