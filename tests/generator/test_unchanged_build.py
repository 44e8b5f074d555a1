"""A site build is skipped when nothing it reads changed since the last build into its folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from generator.build import STAMP
from scoring.tables.write import parquet_bytes
from tests.generator.conftest import REPO
from tests.generator.fixture_tables import write_fixture_config

pytestmark = pytest.mark.slow


def _mtimes(site: Path) -> dict[str, int]:
    return {
        str(p.relative_to(site)): p.stat().st_mtime_ns for p in site.rglob("*.html") if p.is_file()
    }


def _build(cfg: Path, *, force: bool = False) -> tuple[Path, list[Path]]:
    """Build the site of ``cfg``; returns it and the folders reported unchanged (skipped)."""
    skipped: list[Path] = []
    out = pipeline.build_site(Project(load_config(cfg)), force=force, unchanged=skipped.append)
    return out, skipped


def _rebuilt(cfg: Path, site: Path) -> bool:
    """Build again; whether the pages were rewritten (and the skip not reported)."""
    before = _mtimes(site)
    out, skipped = _build(cfg)
    after = _mtimes(out)
    assert bool(skipped) == (before == after)
    return before != after


def test_an_unchanged_build_is_skipped_and_each_input_rebuilds(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    # the project's own pages: mkdocs.yml and site_src/ beside the config
    shutil.copy2(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(REPO / "site_src", tmp_path / "site_src", ignore=shutil.ignore_patterns(".*"))
    shutil.rmtree(tmp_path / "site_src" / "generated", ignore_errors=True)
    site, skipped = _build(cfg)
    assert not skipped and (site / STAMP).is_file()
    stamp = (site / STAMP).read_text(encoding="utf-8")
    # nothing changed (the build's own generated pages included): skipped, pages untouched
    assert not _rebuilt(cfg, site)
    assert (site / STAMP).read_text(encoding="utf-8") == stamp

    # the tables written again, unchanged but for when (as every `gamut score` does): skipped
    table = tmp_path / "results" / "leaderboard.parquet"
    arrow = pq.read_table(table)
    table.write_bytes(parquet_bytes(arrow, {"generated_at": "2030-01-01T00:00:00Z"}))
    assert _rebuilt(cfg, site)
    table.write_bytes(parquet_bytes(arrow, {"generated_at": "2031-01-01T00:00:00Z"}))
    prov = tmp_path / "results" / "provenance.json"
    when = json.loads(prov.read_text(encoding="utf-8"))["generated_at"]
    prov.write_text(prov.read_text(encoding="utf-8").replace(when, "2031-01-01T00:00:00Z"))
    assert not _rebuilt(cfg, site)
    # a results table
    df = pd.read_parquet(table)
    df.loc[0, "n_questions"] += 1
    df.to_parquet(table)
    assert _rebuilt(cfg, site)
    assert not _rebuilt(cfg, site)
    # a hand-written page
    page = tmp_path / "site_src" / "methodology.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert _rebuilt(cfg, site)
    assert "One more line." in (site / "methodology.html").read_text(encoding="utf-8")
    assert not _rebuilt(cfg, site)
    # the config's [site] title
    text = cfg.read_text(encoding="utf-8").replace("Fixture leaderboard", "Renamed board")
    cfg.write_text(text, encoding="utf-8")
    assert _rebuilt(cfg, site)
    assert "Renamed board" in (site / "index.html").read_text(encoding="utf-8")
    # --force, or a deleted site folder
    before = _mtimes(site)
    _, skipped = _build(cfg, force=True)
    assert not skipped and _mtimes(site) != before
    shutil.rmtree(site)
    _, skipped = _build(cfg)
    assert not skipped and (site / "index.html").is_file()


def test_a_stamp_of_other_inputs_rebuilds(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    site, _ = _build(cfg)
    (site / STAMP).write_text("0" * 64 + "\n", encoding="utf-8")
    assert _rebuilt(cfg, site)
    (site / STAMP).unlink()
    assert _rebuilt(cfg, site)
    # a submission's file touched: its size and time are part of the fingerprint
    response = next(p for p in sorted((tmp_path / "submissions").rglob("*")) if p.is_file())
    os.utime(response, ns=(1, response.stat().st_mtime_ns + 10**9))
    assert _rebuilt(cfg, site)


def test_site_build_says_when_the_site_is_unchanged(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    first = CliRunner().invoke(main, ["site", "build", "--config", str(cfg)])
    assert first.exit_code == 0, first.output
    assert "site built:" in first.output
    again = CliRunner().invoke(main, ["site", "build", "--config", str(cfg)])
    assert again.exit_code == 0, again.output
    assert "site unchanged:" in again.output
    forced = CliRunner().invoke(main, ["site", "build", "--force", "--config", str(cfg)])
    assert forced.exit_code == 0, forced.output
    assert "site built:" in forced.output
