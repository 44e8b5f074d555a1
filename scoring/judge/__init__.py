"""The LLM judge (ARCHITECTURE.md, "The judge"): (response, check) pairs -> verdicts in the
ledger (through its SQLite working index) -> the verdict table."""

from scoring.judge.backends import (
    Backend,
    BackendError,
    Completion,
    JudgeRequest,
    Turn,
    backend_class,
    register_backend,
    registered_providers,
)
from scoring.judge.cache import VerdictCache
from scoring.judge.inputs import JudgeInputs, ResponseUnit, list_submissions, response_units
from scoring.judge.judges import BuiltJudge, build_judges, judge_provenance
from scoring.judge.pairs import PairPlan, pair_plans
from scoring.judge.prompt import JudgeReply, load_template, parse_reply
from scoring.judge.runner import Failure, JudgeReport, JudgeStats, judge_all
from scoring.judge.spec import JudgeConfig, judge_key_problems
from scoring.judge.table import export_verdicts, verdict_frame, write_verdict_table

__all__ = [
    "Backend",
    "BackendError",
    "BuiltJudge",
    "Completion",
    "Failure",
    "JudgeConfig",
    "JudgeInputs",
    "JudgeReply",
    "JudgeReport",
    "JudgeRequest",
    "JudgeStats",
    "PairPlan",
    "ResponseUnit",
    "Turn",
    "VerdictCache",
    "backend_class",
    "build_judges",
    "export_verdicts",
    "judge_all",
    "judge_key_problems",
    "judge_provenance",
    "list_submissions",
    "load_template",
    "pair_plans",
    "parse_reply",
    "register_backend",
    "registered_providers",
    "response_units",
    "verdict_frame",
    "write_verdict_table",
]
