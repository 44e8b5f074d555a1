"""Number formatting shared by the site, the PR comment and the terminal."""

from __future__ import annotations

import math

import pandas as pd

from scoring.numbers import MISSING, f1, f2, integer, pct, signed, with_ci


def test_missing_values_are_a_dash() -> None:
    for value in (None, math.nan, pd.NA, "n/a", True):
        assert f1(value) == signed(value) == pct(value) == integer(value) == MISSING


def test_no_negative_zero() -> None:
    assert f1(-0.04) == "0.0" and f2(-0.004) == "0.00"
    assert signed(-0.04) == "+0.0" and pct(-0.0004) == "0.0%"
    assert f1(-0.06) == "-0.1" and signed(2.25) == "+2.2"


def test_with_ci() -> None:
    assert with_ci(41.26, 35.0, 47.51) == "41.3 [35.0, 47.5]"
    assert with_ci(-3.0, -7.25, 1.0, sign=True) == "-3.0 [-7.2, +1.0]"
    assert with_ci(41.26, None, 47.5) == "41.3"
    assert with_ci(None, 1, 2) == MISSING
