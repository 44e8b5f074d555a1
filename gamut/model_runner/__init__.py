"""A submission from a model API: ``gamut generate`` (resumable, crash-safe)."""

from gamut.model_runner.backends import (
    Backend,
    BackendSettings,
    CallFailed,
    FatalCallError,
    Reply,
    Request,
    make_backend,
)
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

__all__ = [
    "Backend",
    "BackendSettings",
    "CallFailed",
    "Failure",
    "FatalCallError",
    "GenerateOptions",
    "GenerateResult",
    "ImageRef",
    "Plan",
    "Reply",
    "Reporter",
    "Request",
    "ResponseFile",
    "SettingStats",
    "generate",
    "make_backend",
    "prepare",
    "record_production",
    "resolve_images",
    "run",
]
