"""Submission validation (docs/contract.md §7): every problem of a submission folder, at once."""

from scoring.submissions.report import ERROR, WARNING, Limits, ValidationReport
from scoring.submissions.responses import Response, ResponseFile, read_response_file
from scoring.submissions.scaffold import new_submission, scaffold_text
from scoring.submissions.validate import validate_submissions

__all__ = [
    "ERROR",
    "WARNING",
    "Limits",
    "Response",
    "ResponseFile",
    "ValidationReport",
    "new_submission",
    "read_response_file",
    "scaffold_text",
    "validate_submissions",
]
