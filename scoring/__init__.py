"""GAMUT scoring engine: meta-rubric schema, compiler, judge and scorer."""

from scoring.compiler import Check, CheckKind, compile_rubric, default_coverage_thresholds
from scoring.errors import (
    ConfigError,
    GamutError,
    Problem,
    ProblemsError,
    RubricError,
    ScoringError,
)
from scoring.rubric import ItemType, MetaRubric, Tier
from scoring.scorer import (
    QuestionScore,
    ScoringConfig,
    gamut_scores,
    score_question,
    tier_scores,
)
from scoring.verdicts import Verdict

__version__ = "0.1.0"

__all__ = [
    "Check",
    "CheckKind",
    "ConfigError",
    "GamutError",
    "ItemType",
    "MetaRubric",
    "Problem",
    "ProblemsError",
    "QuestionScore",
    "RubricError",
    "ScoringConfig",
    "ScoringError",
    "Tier",
    "Verdict",
    "__version__",
    "compile_rubric",
    "default_coverage_thresholds",
    "gamut_scores",
    "score_question",
    "tier_scores",
]
