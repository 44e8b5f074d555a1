"""A submission from a model API: ``gamut generate`` (resumable, crash-safe)."""

from scoring.generate.backends import (
    Backend,
    BackendSettings,
    CallFailed,
    FatalCallError,
    Reply,
    Request,
    make_backend,
)
from scoring.generate.images import ImageRef, resolve_images
from scoring.generate.plan import (
    Failure,
    GenerateOptions,
    GenerateResult,
    Plan,
    Reporter,
    SettingStats,
    prepare,
)
from scoring.generate.provenance import record_production
from scoring.generate.runner import generate, run
from scoring.generate.store import ResponseFile

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
