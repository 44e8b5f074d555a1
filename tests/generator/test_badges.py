"""Every model's badge: its file, what it says (the leaderboard's own score and rank), and the
model page that shows it and the Markdown that embeds it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

from gamut.config import GamutConfig
from generator.badges import COLOURS, Badge, svg
from scoring.numbers import f1

SVG = "{http://www.w3.org/2000/svg}"


def _primary_multimodal(cfg: GamutConfig) -> pd.DataFrame:
    lb = pd.read_parquet(cfg.path(cfg.store.results) / "leaderboard.parquet")
    primary = lb[lb["primary"]]["judge"].iloc[0]
    return lb[(lb["judge"] == primary) & (lb["setting"] == "multimodal")]


def test_each_model_has_a_badge_with_its_leaderboard_score_and_rank(
    held_site: tuple[GamutConfig, Path],
) -> None:
    cfg, site = held_site
    rows = _primary_multimodal(cfg)
    assert len(rows) >= 2
    for r in rows.to_dict(orient="records"):
        root = ET.fromstring((site / "badges" / f"{r['submission_id']}.svg").read_text())
        texts = [t.text for t in root.iter(f"{SVG}text")]
        ranked = not pd.isna(r["rank"])
        want = f"{f1(r['gamut'])} · " + (f"#{int(r['rank'])}" if ranked else "not ranked")
        assert texts == ["GAMUT", want]
        rects = [float(x.get("width", 0)) for x in root.iter(f"{SVG}rect")]
        assert float(root.get("width", 0)) == sum(rects)  # the two parts fill the badge
        fills = {x.get("fill") for x in root.iter(f"{SVG}rect")}
        colour = "unranked" if not ranked else "first" if int(r["rank"]) == 1 else "ranked"
        assert COLOURS[colour] in fills


def test_the_model_page_shows_its_badge_and_the_markdown_to_embed_it(
    held_site: tuple[GamutConfig, Path],
) -> None:
    _cfg, site = held_site
    page = (site / "submissions" / "acme-vision-1.html").read_text()
    assert 'src="../badges/acme-vision-1.svg"' in page
    assert (site / "submissions" / "../badges/acme-vision-1.svg").resolve().is_file()
    # the fixture config names no site address: the Markdown says what to replace
    assert "(SITE_URL/badges/acme-vision-1.svg)](SITE_URL/)" in page
    assert "replace <code>SITE_URL</code>" in page


def test_badge_text_is_escaped() -> None:
    doc = svg(Badge("x", "<b>&amp;</b>", COLOURS["ranked"]))
    root = ET.fromstring(doc)  # well-formed whatever the text
    assert [t.text for t in root.iter(f"{SVG}text")][1] == "<b>&amp;</b>"
    assert "<b>" not in doc
