"""The LLM judge (SPEC section 5): (response, check) pairs -> verdicts in the SQLite cache ->
``results/verdicts.parquet``."""

from scoring.judge.backends import (
    Backend,
    BackendError,
    Completion,
    JudgeRequest,
    Turn,
    backend_class,
    register_backend,
)
from scoring.judge.cache import VerdictCache
from scoring.judge.inputs import load_inputs, resolve_rubrics_path
from scoring.judge.judges import BuiltJudge, build_judges, check_keys
from scoring.judge.prompt import JudgeReply, load_template, parse_reply
from scoring.judge.runner import Failure, JudgeReport, JudgeStats, judge_all
from scoring.judge.table import export_verdicts, verdict_frame, write_verdict_table

__all__ = [
    "Backend",
    "BackendError",
    "BuiltJudge",
    "Completion",
    "Failure",
    "JudgeReply",
    "JudgeReport",
    "JudgeRequest",
    "JudgeStats",
    "Turn",
    "VerdictCache",
    "backend_class",
    "build_judges",
    "check_keys",
    "export_verdicts",
    "judge_all",
    "load_inputs",
    "load_template",
    "parse_reply",
    "register_backend",
    "resolve_rubrics_path",
    "verdict_frame",
    "write_verdict_table",
]
