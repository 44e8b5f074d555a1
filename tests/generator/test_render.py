"""Formatting, escaping and the worded summary of the visual identification tax."""

from __future__ import annotations

import math

import pytest

from generator.pages import tax_sentence
from generator.render import file_id, link, safe_url, slug, yes_no
from scoring.numbers import f1, pct, signed


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (12.345, "12.3"),
        (-0.004, "0.0"),
        (-0.04, "0.0"),
        (-0.06, "-0.1"),
        (float("nan"), "–"),
        (None, "–"),
        ("x", "–"),
    ],
)
def test_one_decimal(value: object, shown: str) -> None:
    assert f1(value) == shown


def test_yes_no_with_missing_values() -> None:
    import pandas as pd

    assert [yes_no(v) for v in (True, False, None, math.nan, pd.NA)] == [
        "yes", "no", "–", "–", "–"]  # fmt: skip


def test_signed_and_percent() -> None:
    assert signed(3.21) == "+3.2"
    assert signed(-3.25) == "-3.2"
    assert signed(-0.01) == signed(0.01) == signed(0.0) == "0.0"  # zero has no sign
    assert pct(-0.0001) == "0.0%"
    assert pct(0.1234) == "12.3%"
    assert pct(math.nan) == "–"


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        " javascript:alert(1)",
        "data:text/html,x",
        "vbscript:x",
        "//evil.example/x",
        'https://ok.example/"onmouseover=x',
        "http:///x",
        "https://a.example/<script>",
        "ftp://a.example/",
        None,
        42,
    ],
)
def test_unsafe_links_are_rejected(url: object) -> None:
    assert safe_url(url) is None
    out = str(link(url, "<b>name</b>"))
    assert "<a" not in out
    assert "&lt;b&gt;name&lt;/b&gt;" in out


def test_http_links_are_kept_and_escaped() -> None:
    out = str(link("https://example.org/a?b=1&c=2", "A & B"))
    assert (
        out == '<a href="https://example.org/a?b=1&amp;c=2" rel="nofollow noopener">A &amp; B</a>'
    )


def test_slug_and_file_id() -> None:
    assert slug("Local places") == "local-places"
    assert slug("<>") == "x"
    assert file_id("acme-vision_1.0") == "acme-vision_1.0"
    odd = file_id("../../etc")
    assert "/" not in odd and odd.startswith("etc-")
    assert file_id("../../etc") == odd


def _summary(**kw: float) -> dict[str, float]:
    base = {"n_models": 14, "mean_gap": 15.0, "sd_gap": 2.0, "min_gap": 11.0, "max_gap": 19.0}
    return {**base, **kw}


def test_tax_sentence_uniform() -> None:
    s = tax_sentence(_summary())
    assert s.startswith("All 14 models score higher")
    assert "+15.0" in s and "+11.0" in s and "+19.0" in s
    assert "nearly uniform" in s


def test_tax_sentence_fairly_uniform_and_uneven() -> None:
    assert "fairly uniform" in tax_sentence(_summary(sd_gap=6.0))
    s = tax_sentence(_summary(sd_gap=12.0, min_gap=-4.0))
    assert "do not all gain" in s and "differs markedly" in s
    assert "score lower" in tax_sentence(_summary(mean_gap=-5.0, min_gap=-9.0, max_gap=-1.0))


def test_tax_sentence_words_follow_the_printed_gaps() -> None:
    # a loss of 0.04 points prints as 0.0: the words say no model scores lower at this precision
    for tiny in (-0.04, -0.001, 0.0, 0.04):
        s = tax_sentence(_summary(min_gap=tiny))
        assert s.startswith("None of the 14 models scores lower (at this precision)")
        assert "from 0.0 to +19.0" in s and "+0.0" not in s and "-0.0" not in s
    assert tax_sentence(_summary(min_gap=-0.06)).startswith("The 14 models do not all gain")
    assert "from -0.1 to" in tax_sentence(_summary(min_gap=-0.06))
    assert tax_sentence(_summary(min_gap=0.05)).startswith("All 14 models score higher")


def test_tax_sentence_too_few_models() -> None:
    assert tax_sentence(_summary(n_models=1)).startswith("Too few models")
    assert tax_sentence(_summary(sd_gap=math.nan)).startswith("Too few models")
