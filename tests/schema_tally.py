"""Validation against the published JSON Schemas, counted for the test report's summary line.

The schema tests validate with :func:`validate_file` and :func:`agree`; the root ``conftest.py``
prints what they counted (files written, files and rows validated, edge cases agreed on).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

#: What the schema tests counted in this test session.
TALLY: Counter[str] = Counter()


def validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator of the published schema ``name`` that checks formats (dates) too."""
    import jsonschema  # imported here: the root conftest imports this module in every session

    from gamut.cli.schema import json_schemas

    return jsonschema.Draft202012Validator(
        json_schemas()[name], format_checker=jsonschema.FormatChecker()
    )


def errors(name: str, value: Any) -> list[str]:
    """What schema ``name`` finds wrong with ``value`` (a JSON value), as ``path: message``."""
    return [
        f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator(name).iter_errors(value)
    ]


def validate_file(name: str, where: str, rows: Iterable[Any]) -> int:
    """Validate every row of one written file against schema ``name``; returns the rows.

    Raises:
        AssertionError: naming the file, the row and what the schema refuses.
    """
    v = validator(name)
    n = 0
    for n, row in enumerate(rows, 1):
        bad = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(row)]
        assert not bad, f"{where} row {n} fails {name}: {bad[:3]}"
    assert n, f"{where} has no rows to validate"
    TALLY["files validated"] += 1
    TALLY["rows validated"] += n
    return n


def written(n: int = 1) -> None:
    """Count files the project wrote in a schema test."""
    TALLY["files written"] += n


def agree(accepted_by_schema: bool, accepted_by_validator: bool) -> None:
    """Count one edge case on which the schema and the validator agree (assert that they do)."""
    assert accepted_by_schema == accepted_by_validator, (
        f"schema {'accepts' if accepted_by_schema else 'refuses'}, "
        f"validator {'accepts' if accepted_by_validator else 'refuses'}"
    )
    TALLY["edge cases agreed"] += 1


__all__ = ["TALLY", "agree", "errors", "validate_file", "validator", "written"]
