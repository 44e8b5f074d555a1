"""The folders' layout values (scoring/layout.py): where a submission's and the results' files
are, and that Project builds them from the config's paths."""

from __future__ import annotations

from pathlib import Path

from gamut.config import load_config
from gamut.project import Project
from scoring.layout import ResultsLayout, SubmissionFolder, SubmissionsLayout
from scoring.questions import Setting
from scoring.submissions.formats import METADATA_FILE, RESPONSE_FILES
from scoring.tables import PROVENANCE_FILE
from scoring.verdicts import VERDICT_TABLE
from tests.hub.conftest import write_config


def test_a_submission_folder_names_its_metadata_and_a_file_per_setting(tmp_path: Path) -> None:
    folder = SubmissionFolder(tmp_path / "acme-vl")
    assert folder.id == "acme-vl"
    assert (
        folder.metadata == tmp_path / "acme-vl" / "submission.yaml" == folder.path / METADATA_FILE
    )
    assert folder.responses(Setting.MULTIMODAL) == tmp_path / "acme-vl" / "multimodal.jsonl"
    assert folder.responses("text_only") == tmp_path / "acme-vl" / RESPONSE_FILES["text_only"]
    assert not folder.has_metadata() and not folder.has_responses()
    folder.path.mkdir()
    folder.responses(Setting.TEXT_ONLY).write_text("", encoding="utf-8")
    assert folder.has_responses() and not folder.has_metadata()
    folder.metadata.write_text("model_name: A\n", encoding="utf-8")
    assert folder.has_metadata()


def test_the_submissions_folder_lists_its_entries_sorted(tmp_path: Path) -> None:
    layout = SubmissionsLayout(tmp_path / "subs")
    assert layout.folders() == []  # no folder yet: nothing, and no error
    for name in ("zeta", "alpha", "mid"):
        (layout.root / name).mkdir(parents=True)
    assert [f.id for f in layout.folders()] == ["alpha", "mid", "zeta"]
    assert layout.responses("mid", Setting.MULTIMODAL) == layout.root / "mid" / "multimodal.jsonl"


def test_the_results_folder_names_each_table_by_name_and_format(tmp_path: Path) -> None:
    results = ResultsLayout(tmp_path)
    assert results.table("leaderboard") == tmp_path / "leaderboard.parquet"
    assert results.table("by_domain", "csv") == tmp_path / "by_domain.csv"
    assert results.verdicts == tmp_path / VERDICT_TABLE == tmp_path / "verdicts.parquet"
    assert results.provenance == tmp_path / PROVENANCE_FILE == tmp_path / "provenance.json"


def test_project_builds_the_layouts_from_the_config(tmp_path: Path) -> None:
    extra = '[store]\nresults = "out/tables"\n'
    project = Project(load_config(write_config(tmp_path, "rubrics", extra=extra)))
    assert project.results_layout == ResultsLayout(tmp_path / "out" / "tables")
    assert project.verdict_table == tmp_path / "out" / "tables" / "verdicts.parquet"
    assert project.submissions == SubmissionsLayout(project.submissions_root)
    assert project.submissions.folder("x-1").metadata == project.submissions_root / "x-1" / (
        "submission.yaml"
    )
