"""How numbers are shown, everywhere the project shows them: the site, the pull-request comment and
the terminal. One decimal for scores, a dash for a missing value, never a negative zero, and no
sign on a value that rounds to zero ("0.0", never "+0.0" for -0.03).

Sentences are worded from the figures as printed (:func:`compared`): a difference that prints as
0.0 reads "about the same", never "higher by 0.0" or "0.0 points lower"."""

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


def _no_negative_zero(text: str) -> str:
    """'-0.0' reads as a loss; a value that rounds to zero is shown as zero."""
    if text.startswith("-") and float(text.rstrip("%")) == 0:
        return text[1:]
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
    """One decimal with an explicit sign (for gaps and offsets); a value that rounds to zero is
    "0.0", with no sign."""
    f = number(value)
    if f is None:
        return MISSING
    text = f"{f:+.1f}"
    return "0.0" if float(text) == 0 else text


def rounded(value: Any) -> float | None:
    """``value`` as one decimal prints it (what a sentence about a printed figure reasons on), or
    None when missing; never -0.0."""
    f = number(value)
    return None if f is None else float(f"{f:.1f}") + 0.0


def compared(
    value: Any,
    than: str = "",
    *,
    lo: Any = None,
    hi: Any = None,
    more: str = "higher",
    less: str = "lower",
    unit: str = "points",
) -> str:
    """A difference (this minus ``than``) in words, from its figures as printed: ``3.2 points higher
    than X``, or ``about the same as X (no difference at this precision)`` when it prints as 0.0;
    with ``lo`` and ``hi``, its 95% interval follows."""
    r = rounded(value)
    if r is None:
        return MISSING
    interval = ""
    if number(lo) is not None and number(hi) is not None:
        interval = f"95% CI of the difference [{signed(lo)}, {signed(hi)}]"
    if r == 0:
        tail = "; ".join(["no difference at this precision", *([interval] if interval else [])])
        return f"about the same{' as ' + than if than else ''} ({tail})"
    said = f"{f1(abs(r))} {unit} {more if r > 0 else less}{' than ' + than if than else ''}"
    return f"{said} ({interval})" if interval else said


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


__all__ = [
    "MISSING",
    "compared",
    "f1",
    "f2",
    "integer",
    "number",
    "pct",
    "rounded",
    "signed",
    "usd",
    "with_ci",
]
