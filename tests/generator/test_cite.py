"""The Cite page: the leaderboard's entry from the build's own provenance, the paper's entry
only as the maintainers give it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gamut.config import GamutConfig
from gamut.project import Project
from generator.cite import PAPER_TITLE, cite_page
from generator.tables import load_tables


def test_the_cite_page_names_the_version_engine_and_judge_of_this_build(
    held_site: tuple[GamutConfig, Path],
) -> None:
    cfg, site = held_site
    prov = json.loads((cfg.path(cfg.store.results) / "provenance.json").read_text())
    page = (site / "cite.html").read_text()
    assert "@misc{gamut_leaderboard," in page
    assert f"benchmark version {prov['rubric_version']}" in page
    assert f"engine {prov['engine_version']}" in page
    assert PAPER_TITLE in page and "have not given its BibTeX entry" in page
    assert 'href="cite.html"' in (site / "methodology.html").read_text()


def test_a_given_paper_entry_is_shown_and_braces_in_the_title_cannot_end_a_field(
    held_site: tuple[GamutConfig, Path],
) -> None:
    cfg, _site = held_site
    spec = dataclasses.replace(
        Project(cfg).site_spec(),
        title="A {b} leaderboard\\",
        url="https://example.org/lb/",
        citation="@article{gamut, title={GAMUT}}",
    )
    ctx = cite_page(spec, load_tables(spec.results))
    assert ctx["paper"] == "@article{gamut, title={GAMUT}}"
    assert "title = {{A \\{b\\} leaderboard\\\\}}" in ctx["leaderboard"]
    assert "howpublished = {\\url{https://example.org/lb/}}" in ctx["leaderboard"]
    assert not ctx["needs_url"]
