"""How numbers are shown, everywhere the project shows them: the site, the pull-request comment and
the terminal. One decimal for scores, a dash for a missing value, never a negative zero."""

from __future__ import annotations

import math
from typing import Any

#: What a missing value is shown as.
MISSING = "–"


def number(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing (None, NaN, pandas NA, a bool, text)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _no_negative_zero(text: str, sign: str = "") -> str:
    """'-0.0' reads as a loss; a value that rounds to zero is shown as zero."""
    if text.startswith("-") and float(text.rstrip("%")) == 0:
        return sign + text[1:]
    return text


def f1(value: Any) -> str:
    """One decimal, or a dash for a missing value."""
    f = number(value)
    return MISSING if f is None else _no_negative_zero(f"{f:.1f}")


def f2(value: Any) -> str:
    """Two decimals (for correlation coefficients), or a dash."""
    f = number(value)
    return MISSING if f is None else _no_negative_zero(f"{f:.2f}")


def signed(value: Any) -> str:
    """One decimal with an explicit sign (for gaps and offsets)."""
    f = number(value)
    return MISSING if f is None else _no_negative_zero(f"{f:+.1f}", "+")


def pct(value: Any) -> str:
    """A share in [0, 1] as a percentage with one decimal."""
    f = number(value)
    return MISSING if f is None else _no_negative_zero(f"{100 * f:.1f}%")


def integer(value: Any) -> str:
    """A count without decimals."""
    f = number(value)
    return MISSING if f is None else f"{f:,.0f}"


def usd(value: Any) -> str:
    """US dollars: cents from $1 up, four decimals below (a row's judging can cost less than a
    cent), or a dash."""
    f = number(value)
    if f is None:
        return MISSING
    return f"${f:,.2f}" if abs(f) >= 1 or f == 0 else f"${f:.4f}"


def with_ci(value: Any, lo: Any, hi: Any, *, sign: bool = False) -> str:
    """``value [lo, hi]`` (one decimal each, signed when ``sign``); the value alone when the
    interval is missing."""
    show = signed if sign else f1
    if number(value) is None or number(lo) is None or number(hi) is None:
        return show(value)
    return f"{show(value)} [{show(lo)}, {show(hi)}]"


__all__ = ["MISSING", "f1", "f2", "integer", "number", "pct", "signed", "usd", "with_ci"]
