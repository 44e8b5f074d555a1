"""Session-wide hooks: the schema tests' counts, one line in the terminal summary."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.schema_tally import TALLY

# One Hypothesis profile for the whole suite. A property is about values, never about time: on a
# loaded two-core machine an example may take seconds, so no deadline and no "too slow" health
# check. CI (CI=true) also prints the reproducing blob of any failure. HYPOTHESIS_PROFILE picks
# another registered profile.
settings.register_profile(
    "gamut",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", parent=settings.get_profile("gamut"), print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "gamut")
)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand this worker's counts to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["schema_tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """In the pytest-xdist controller: add up each worker's counts as it finishes."""
    TALLY.update(getattr(node, "workeroutput", {}).get("schema_tally", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line: files written, files (and rows) validated against their schemas, edge cases on
    which schema and validator agree; only when a schema test ran."""
    if not TALLY:
        return
    terminalreporter.write_line(
        f"schemas: {TALLY['files written']} files written, {TALLY['files validated']} files "
        f"({TALLY['rows validated']} rows) validated against their schemas, "
        f"{TALLY['edge cases agreed']} edge cases on which schema and validator agree"
    )
