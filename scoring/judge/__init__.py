"""The LLM judge (ARCHITECTURE.md, "The judge"): (response, check) pairs -> verdicts in the
ledger (through its SQLite working index) -> the verdict table.

The public names are imported on first use: reading the judge's config format
(``scoring.judge.spec``) does not import the backends, the cache or pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy import lazy_exports

if TYPE_CHECKING:
    from scoring.errors import BackendError, ErrorKind
    from scoring.judge.backends import Backend, Completion, JudgeRequest, Turn
    from scoring.judge.cache import VerdictCache
    from scoring.judge.inputs import JudgeInputs, ResponseUnit, list_submissions, response_units
    from scoring.judge.judges import BuiltJudge, build_judges, judge_provenance
    from scoring.judge.pairs import PairPlan, pair_plans
    from scoring.judge.prompt import JudgeReply, load_template, parse_reply
    from scoring.judge.providers import REGISTRY, ProviderEntry
    from scoring.judge.runner import Failure, JudgeReport, JudgeStats, judge_all
    from scoring.judge.spec import JudgeConfig, judge_key_problems
    from scoring.judge.table import export_verdicts, verdict_frame, write_verdict_table

#: public name -> the module that defines it
_HOMES = {
    "Backend": "scoring.judge.backends",
    "BackendError": "scoring.errors",
    "ErrorKind": "scoring.errors",
    "Completion": "scoring.judge.backends",
    "JudgeRequest": "scoring.judge.backends",
    "Turn": "scoring.judge.backends",
    "REGISTRY": "scoring.judge.providers",
    "ProviderEntry": "scoring.judge.providers",
    "VerdictCache": "scoring.judge.cache",
    "JudgeInputs": "scoring.judge.inputs",
    "ResponseUnit": "scoring.judge.inputs",
    "list_submissions": "scoring.judge.inputs",
    "response_units": "scoring.judge.inputs",
    "BuiltJudge": "scoring.judge.judges",
    "build_judges": "scoring.judge.judges",
    "judge_provenance": "scoring.judge.judges",
    "PairPlan": "scoring.judge.pairs",
    "pair_plans": "scoring.judge.pairs",
    "JudgeReply": "scoring.judge.prompt",
    "load_template": "scoring.judge.prompt",
    "parse_reply": "scoring.judge.prompt",
    "Failure": "scoring.judge.runner",
    "JudgeReport": "scoring.judge.runner",
    "JudgeStats": "scoring.judge.runner",
    "judge_all": "scoring.judge.runner",
    "JudgeConfig": "scoring.judge.spec",
    "judge_key_problems": "scoring.judge.spec",
    "export_verdicts": "scoring.judge.table",
    "verdict_frame": "scoring.judge.table",
    "write_verdict_table": "scoring.judge.table",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


__all__ = [
    "REGISTRY",
    "Backend",
    "BackendError",
    "BuiltJudge",
    "Completion",
    "ErrorKind",
    "Failure",
    "JudgeConfig",
    "JudgeInputs",
    "JudgeReply",
    "JudgeReport",
    "JudgeRequest",
    "JudgeStats",
    "PairPlan",
    "ProviderEntry",
    "ResponseUnit",
    "Turn",
    "VerdictCache",
    "build_judges",
    "export_verdicts",
    "judge_all",
    "judge_key_problems",
    "judge_provenance",
    "list_submissions",
    "load_template",
    "pair_plans",
    "parse_reply",
    "response_units",
    "verdict_frame",
    "write_verdict_table",
]
