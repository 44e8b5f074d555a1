"""The suite's own settings: what every property test runs under."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_every_property_runs_without_a_deadline_or_a_too_slow_check() -> None:
    profile = settings.default
    assert profile.deadline is None
    assert HealthCheck.too_slow in profile.suppress_health_check
