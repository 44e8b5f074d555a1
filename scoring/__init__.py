"""GAMUT scoring engine: meta-rubric schema, compiler, judge and scorer.

The public names below are imported on first use, so that importing one engine module (or reading
``__version__``) does not import numpy and every pydantic model of the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoring.lazy import lazy_exports

if TYPE_CHECKING:
    from scoring.compiler import Check, CheckKind, compile_rubric, default_coverage_thresholds
    from scoring.errors import GamutError, Problem, ProblemsError, RubricError
    from scoring.judge.prompt import PromptTemplate, load_template
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

#: public name -> the module that defines it
_HOMES = {
    "Check": "scoring.compiler",
    "CheckKind": "scoring.compiler",
    "compile_rubric": "scoring.compiler",
    "default_coverage_thresholds": "scoring.compiler",
    "ProblemsError": "scoring.errors",
    "GamutError": "scoring.errors",
    "Problem": "scoring.errors",
    "RubricError": "scoring.errors",
    "PromptTemplate": "scoring.judge.prompt",
    "load_template": "scoring.judge.prompt",
    "ItemType": "scoring.rubric",
    "MetaRubric": "scoring.rubric",
    "Tier": "scoring.rubric",
    "QuestionScore": "scoring.scorer",
    "ScoringConfig": "scoring.parameters",
    "gamut_scores": "scoring.scorer",
    "score_question": "scoring.scorer",
    "tier_scores": "scoring.scorer",
    "Verdict": "scoring.verdicts",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


__all__ = [
    "Check",
    "CheckKind",
    "GamutError",
    "ItemType",
    "MetaRubric",
    "Problem",
    "ProblemsError",
    "PromptTemplate",
    "QuestionScore",
    "RubricError",
    "ScoringConfig",
    "Tier",
    "Verdict",
    "__version__",
    "compile_rubric",
    "default_coverage_thresholds",
    "gamut_scores",
    "load_template",
    "score_question",
    "tier_scores",
]
