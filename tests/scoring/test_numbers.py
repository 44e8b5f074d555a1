"""Number formatting shared by the site, the PR comment and the terminal."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from scoring.numbers import MISSING, compared, f1, f2, integer, pct, rounded, signed, with_ci


def test_missing_values_are_a_dash() -> None:
    for value in (None, math.nan, pd.NA, "n/a", True):
        assert f1(value) == signed(value) == pct(value) == integer(value) == MISSING


def test_no_negative_zero() -> None:
    assert f1(-0.04) == "0.0" and f2(-0.004) == "0.00"
    assert signed(-0.04) == "0.0" and pct(-0.0004) == "0.0%"
    assert f1(-0.06) == "-0.1" and signed(2.25) == "+2.2"


def test_with_ci() -> None:
    assert with_ci(41.26, 35.0, 47.51) == "41.3 [35.0, 47.5]"
    assert with_ci(-3.0, -7.25, 1.0, sign=True) == "-3.0 [-7.2, +1.0]"
    assert with_ci(41.26, None, 47.5) == "41.3"
    assert with_ci(None, 1, 2) == MISSING


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(finite)
def test_signed_shows_the_sign_of_the_printed_figure(x: float) -> None:
    text = signed(x)
    shown = float(text)
    assert shown == rounded(x) and abs(shown - x) <= 0.05 + 1e-9
    if shown == 0:
        assert text == "0.0"  # never "+0.0" or "-0.0", whichever side of zero x is
    else:
        assert text[0] == ("+" if shown > 0 else "-") and (x > 0) == (shown > 0)


@given(finite, finite, finite)
def test_compared_words_follow_the_printed_figures(x: float, a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    text = compared(x, "B", lo=lo, hi=hi)
    r = rounded(x)
    assert f"95% CI of the difference [{signed(lo)}, {signed(hi)}]" in text
    if r == 0:
        assert text.startswith("about the same as B (no difference at this precision")
        assert "0.0 points" not in text
    else:
        word = "higher" if r > 0 else "lower"
        assert text.startswith(f"{f1(abs(r))} points {word} than B (95% CI of the difference [")
        assert f1(abs(r)) != "0.0" and "-" not in text.split(" points")[0]


def test_compared_without_an_interval_or_a_value() -> None:
    assert compared(-0.26, "them") == "0.3 points lower than them"
    assert compared(0.04) == "about the same (no difference at this precision)"
    assert compared(-0.04, "A") == "about the same as A (no difference at this precision)"
    assert compared(None, "A") == MISSING
    assert compared(2.0, "A", more="more", less="less", unit="checks") == "2.0 checks more than A"
