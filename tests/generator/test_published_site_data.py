"""The site data (the explorer's data and the responses download) as the score step publishes
it: made once per set of inputs, hard-linked by a site build while current and made by the build
itself otherwise, never a mix of two scores, and with held rubrics free of rubric text."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator.downloads import RESPONSES, read_responses_download
from generator.inputs import load_site_inputs
from generator.published import (
    PAGE_FILE,
    PUBLISHED,
    link_site_data,
    publish_site_data,
    site_data_key,
)
from generator.spec import SiteSpec
from generator.tables import load_tables
from scoring.layout import SubmissionsLayout
from tests.generator.conftest import assert_no_rubric_text, inject_rubric_text
from tests.generator.fixture_tables import write_fixture_config

pytestmark = pytest.mark.slow


def _spec(root: Path, public: bool) -> SiteSpec:
    return Project(load_config(write_fixture_config(root, rubrics_public=public))).site_spec()


def _args(spec: SiteSpec) -> tuple[Path, Path]:
    assert spec.questions is not None and spec.submissions is not None
    return spec.questions, spec.submissions


def _publish(spec: SiteSpec) -> Path:
    """Publish as `gamut score` does; returns the one published folder."""
    publish_site_data(spec.results, *_args(spec), spec.rubrics_public)
    [folder] = (spec.results / PUBLISHED).glob("site.*")
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("public", [False, True])
def test_a_build_shows_the_published_files_as_it_makes_them(tmp_path: Path, public: bool) -> None:
    spec = _spec(tmp_path, public)
    folder = _publish(spec)
    project = Project(load_config(spec.root / "gamut.toml"))
    site = pipeline.build_site(project)
    linked = _files(site / "explorer") | {RESPONSES: (site / RESPONSES).read_bytes()}
    shutil.rmtree(folder)  # no published copy: the build makes the same files itself
    site = pipeline.build_site(project, force=True)
    made = _files(site / "explorer") | {RESPONSES: (site / RESPONSES).read_bytes()}
    assert linked == made
    assert any(name.startswith("q/") for name in made) and "questions.js" in made
    assert any(name.endswith(".rationales.js") for name in made) == public
    # the responses read back from the published copy are those of the response files
    tables, (questions, submissions) = load_tables(spec.results), _args(spec)
    from_files = load_site_inputs(questions, submissions, tables).responses
    assert read_responses_download(site / RESPONSES) == from_files and len(from_files) > 2


def test_only_a_current_copy_is_linked_and_the_next_score_replaces_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, public=False)
    questions, submissions = _args(spec)
    old = _publish(spec)
    page = json.loads((old / PAGE_FILE).read_bytes())
    docs = tmp_path / "docs"
    assert link_site_data(load_tables(spec.results), questions, submissions, False, docs) == page
    for linked in (next((docs / "explorer" / "q").iterdir()), docs / RESPONSES):
        assert linked.stat().st_nlink == 2  # the same file, not a copy
    # a folder already holding these parts is left as it is
    assert link_site_data(load_tables(spec.results), questions, submissions, False, docs) is None
    assert (docs / RESPONSES).stat().st_nlink == 2
    # a response edited after the score: its explorer data is no longer current
    path = SubmissionsLayout(submissions).responses("acme-vision-1", "multimodal")
    first, *rest = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(first)
    row["response"] = "An edited answer."
    path.write_text(json.dumps(row) + "\n" + "".join(rest), encoding="utf-8")
    stale = tmp_path / "stale-docs"
    assert link_site_data(load_tables(spec.results), questions, submissions, False, stale) is None
    assert not (stale / "explorer").exists() and not (stale / "downloads").exists()
    new = _publish(spec)  # made anew; the old copy is removed
    assert new != old and not old.exists()
    assert "An edited answer." in b"".join(_files(new / "explorer").values()).decode("utf-8")
    assert read_responses_download(new / RESPONSES)[("acme-vision-1", "multimodal")][
        row["question_id"]
    ] == ("An edited answer.")


def test_a_killed_score_leaves_nothing_a_build_would_link(tmp_path: Path) -> None:
    spec = _spec(tmp_path, public=False)
    questions, submissions = _args(spec)
    tables, parent = load_tables(spec.results), spec.results / PUBLISHED
    key = site_data_key(spec.results, questions, submissions, False)
    unfinished = parent / f"site.{key}"  # killed before its page file was written
    (unfinished / "explorer" / "q").mkdir(parents=True)
    partial = unfinished / "explorer" / "q" / "partial.js"
    partial.write_text("window.gamut.put(", encoding="utf-8")
    staging = parent / ".site.999999999.abcdefgh"  # a staging folder of a process gone
    staging.mkdir()
    docs = tmp_path / "docs"
    assert link_site_data(tables, questions, submissions, False, docs) is None
    assert not (docs / "explorer").exists()
    assert _publish(spec) == unfinished
    assert (unfinished / PAGE_FILE).is_file() and not partial.exists()
    assert not staging.exists()


def test_the_held_copy_carries_no_rubric_text(tmp_path: Path) -> None:
    spec = _spec(tmp_path, public=False)
    inject_rubric_text(spec.results)  # the verdict table holds check text and rationales
    assert assert_no_rubric_text(_publish(spec)) > 3


def test_a_copy_removed_while_a_build_links_it_leaves_the_build_to_make_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator import published

    spec = _spec(tmp_path, public=False)
    folder, real = _publish(spec), published._link

    def raced(src: str, dst: str) -> None:
        real(src, dst)
        shutil.rmtree(folder, ignore_errors=True)  # a newer score removes it meanwhile

    monkeypatch.setattr(published, "_link", raced)
    docs = tmp_path / "docs"
    assert link_site_data(load_tables(spec.results), *_args(spec), False, docs) is None
    assert not (docs / "explorer").exists() and not (docs / "downloads").exists()
    monkeypatch.undo()
    site = pipeline.build_site(Project(load_config(spec.root / "gamut.toml")))
    assert (site / RESPONSES).is_file() and (site / "explorer" / "questions.js").is_file()


def test_a_score_removes_what_older_scores_published(tmp_path: Path) -> None:
    spec = _spec(tmp_path, public=False)
    parent = spec.results / PUBLISHED
    (parent / "verdicts").mkdir(parents=True)  # the verdict files of an older version
    (parent / "verdicts.parquet").write_bytes(b"PAR1")
    running = parent / f".site.{os.getpid()}.abcdefgh"  # a score writing now
    running.mkdir()
    folder = _publish(spec)
    assert sorted(p.name for p in parent.iterdir()) == sorted([folder.name, running.name])
