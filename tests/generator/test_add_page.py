"""docs/adding-a-page.md followed once, step by step: a new page is registered, then written,
listed in the navigation at its place and built into HTML; the registration is undone at the
end, and nothing of it is left."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator import build, registry
from generator.registry import Page
from generator.render import environment
from generator.tables import ScoreTables, load_tables
from scoring.tables import score_tables, site_tables
from tests.generator.fixture_tables import write_fixture_config

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
NAME = "organisations"


# Step 1: what it shows, read from the score tables.
def organisations(tables: ScoreTables) -> dict[str, Any]:
    """Each organisation with the number of its models on the leaderboard."""
    lb = tables["leaderboard"].drop_duplicates("submission_id")
    return {"rows": sorted(lb["organisation"].astype(str).value_counts().items())}


# Step 2: its template (a file under generator/templates/ in the repository).
TEMPLATE = """{% include "_front.md.j2" %}
{% include "_notice.md.j2" %}
# Organisations

<ul>
{% for org, n in rows %}
<li class="org">{{ org }}: {{ n }}</li>
{% endfor %}
</ul>
"""
# Step 3: its registry entry, in the navigation before the downloads.
ENTRY = Page(
    f"{NAME}.md",
    f"{NAME}.md.j2",
    "Organisations",
    "Organisations",
    ("leaderboard",),
    lambda s: organisations(s.tables),
)


def _with_template() -> jinja2.Environment:
    env = environment()
    assert env.loader is not None
    env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({f"{NAME}.md.j2": TEMPLATE}), env.loader])
    return env


def _nav_titles(nav: list[Any]) -> list[str]:
    return [next(iter(e)) if isinstance(e, dict) else e for e in nav]


def _guide() -> str:
    return (ROOT / "docs" / "adding-a-page.md").read_text(encoding="utf-8")


def test_the_guide_names_the_steps_this_test_takes() -> None:
    guide = _guide()
    for step in ("generator/registry.py", "`PAGES`", "generator/templates/",
                 "Page(path, template, title, nav, reads, context)", "s.tables", "reads=",
                 "each=", "shown=", "tests/generator/test_add_page.py"):  # fmt: skip
        assert step in guide, step


def test_every_page_reads_registered_tables_and_every_site_table_is_read() -> None:
    tables = {t.name for t in score_tables()}
    read = {name for page in registry.PAGES for name in page.reads}
    assert read <= tables, read - tables
    shown = {*site_tables(optional=False), *site_tables(optional=True)}
    assert shown <= read, f"tables the site requires that no page reads: {shown - read}"


def test_a_registered_page_is_written_listed_and_built(tmp_path: Path) -> None:
    cfg = load_config(write_fixture_config(tmp_path / "project", rubrics_public=False))
    project = Project(cfg)
    before = registry.PAGES
    at = next(i for i, p in enumerate(before) if p.path == "downloads.md")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build, "environment", _with_template)  # step 2
        mp.setattr(registry, "PAGES", (*before[:at], ENTRY, *before[at:]))  # step 3

        # written, with what it read from the tables, and listed before the downloads
        docs = tmp_path / "docs"
        docs.mkdir()
        nav = build.generate_pages(project.site_spec(), docs)
        titles = _nav_titles(nav)
        assert titles[titles.index("Organisations") + 1] == "Downloads"
        assert {"Organisations": f"{NAME}.md"} in nav
        expected = organisations(load_tables(project.results))["rows"]
        assert expected and sum(n for _org, n in expected) >= 2

        # built into HTML by mkdocs, and linked from every page's navigation
        site = pipeline.build_site(project)
        page = (site / f"{NAME}.html").read_text(encoding="utf-8")
        items = [html.unescape(m) for m in re.findall(r'<li class="org">(.*?)</li>', page)]
        assert items == [f"{org}: {n}" for org, n in expected]
        assert f'href="{NAME}.html"' in (site / "index.html").read_text(encoding="utf-8")

    # undone: no entry, and the next build writes no such page nor lists it
    assert ENTRY not in registry.PAGES
    again = tmp_path / "again"
    again.mkdir()
    nav = build.generate_pages(project.site_spec(), again)
    assert "Organisations" not in _nav_titles(nav)
    assert not (again / f"{NAME}.md").exists()


def test_a_page_shown_only_with_audit_labels_is_left_out_without(tmp_path: Path) -> None:
    cfg = load_config(write_fixture_config(tmp_path / "project", rubrics_public=False))
    spec = Project(cfg).site_spec()
    assert "judge_human" not in load_tables(spec.results).frames  # the fixture has no audit
    audited = dataclasses.replace(ENTRY, shown=lambda s: "judge_human" in s.tables.frames)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build, "environment", _with_template)
        mp.setattr(registry, "PAGES", (*registry.PAGES, audited))
        docs = tmp_path / "docs"
        docs.mkdir()
        nav = build.generate_pages(spec, docs)
    assert "Organisations" not in _nav_titles(nav)
    assert not (docs / f"{NAME}.md").exists() and (docs / "judges.md").is_file()
