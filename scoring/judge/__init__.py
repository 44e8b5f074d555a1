"""The LLM judge (ARCHITECTURE.md, "The judge"): (response, check) pairs -> verdicts in the ledger
(through its SQLite working index) -> the verdict table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy import lazy_exports

if TYPE_CHECKING:
    from scoring.judge.backends import Backend, Completion, JudgeRequest, Turn
    from scoring.judge.inputs import JudgeInputs, list_submissions, response_units
    from scoring.judge.judges import BuiltJudge, build_judges
    from scoring.judge.outcome import JudgeReport, JudgeStats
    from scoring.judge.runner import judge_all
    from scoring.judge.table import export_verdicts, verdict_frame

#: public name -> the module that defines it
_HOMES = {
    **dict.fromkeys(("Backend", "Completion", "JudgeRequest", "Turn"), "scoring.judge.backends"),
    **dict.fromkeys(("JudgeInputs", "list_submissions", "response_units"), "scoring.judge.inputs"),
    **dict.fromkeys(("BuiltJudge", "build_judges"), "scoring.judge.judges"),
    **dict.fromkeys(("JudgeReport", "JudgeStats"), "scoring.judge.outcome"),
    "judge_all": "scoring.judge.runner",
    **dict.fromkeys(("export_verdicts", "verdict_frame"), "scoring.judge.table"),
}

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())

__all__ = [
    "Backend",
    "BuiltJudge",
    "Completion",
    "JudgeInputs",
    "JudgeReport",
    "JudgeRequest",
    "JudgeStats",
    "Turn",
    "build_judges",
    "export_verdicts",
    "judge_all",
    "list_submissions",
    "response_units",
    "verdict_frame",
]
