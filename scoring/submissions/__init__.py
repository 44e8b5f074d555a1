"""Submission validation (docs/contract.md §7): every problem of a submission folder, at once."""

from scoring.jsonl import JsonlLimits, dumps_line, read_jsonl
from scoring.submissions.report import ERROR, WARNING, Limits, ValidationReport
from scoring.submissions.responses import (
    Response,
    ResponseFile,
    read_response_file,
    read_responses,
)
from scoring.submissions.scaffold import new_submission, scaffold_text
from scoring.submissions.validate import validate_submissions

__all__ = [
    "ERROR",
    "WARNING",
    "JsonlLimits",
    "Limits",
    "Response",
    "ResponseFile",
    "ValidationReport",
    "dumps_line",
    "new_submission",
    "read_jsonl",
    "read_response_file",
    "read_responses",
    "scaffold_text",
    "validate_submissions",
]
