"""A submission from a model API: ``gamut generate`` (resumable, crash-safe)."""

from gamut.model_runner.images import ImageRef, resolve_images
from gamut.model_runner.plan import (
    Failure,
    GenerateOptions,
    GenerateResult,
    Plan,
    Reporter,
    SettingStats,
    prepare,
)
from gamut.model_runner.provenance import record_production
from gamut.model_runner.runner import generate, run
from gamut.model_runner.store import ResponseFile
from scoring.errors import GamutError

__all__ = [
    "Failure",
    "GamutError",
    "GenerateOptions",
    "GenerateResult",
    "ImageRef",
    "Plan",
    "Reporter",
    "ResponseFile",
    "SettingStats",
    "generate",
    "prepare",
    "record_production",
    "resolve_images",
    "run",
]
