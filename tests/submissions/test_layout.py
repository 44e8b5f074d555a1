"""Folder names, symlinks, paths outside a submission, extra files and --changed-from."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.project import Project as GamutProject
from tests.submissions.helpers import Project


def found(report_problems: list[object]) -> set[tuple[str, str]]:
    return {(p.file, p.message) for p in report_problems}  # type: ignore[attr-defined]


def test_bad_folder_name(project: Project) -> None:
    project.write("Acme_VL")
    report = pipeline.validate(GamutProject(project.cfg))
    (err,) = report.errors
    assert (err.file, err.message) == (
        "submissions/Acme_VL",
        "folder name 'Acme_VL' is not a valid submission id",
    )
    assert "lowercase letters" in err.fix


def test_id_too_close_to_another(project: Project) -> None:
    project.write("acme-vl")
    project.write("acme_vl", multimodal=[])  # content irrelevant here
    report = pipeline.validate(GamutProject(project.cfg), [project.subs / "acme_vl"])
    assert (
        "submissions/acme_vl",
        "submission id 'acme_vl' is too close to existing 'acme-vl'",
    ) in found(report.errors)


def test_missing_files_and_extra_files(project: Project) -> None:
    folder = project.write("acme")
    (folder / "multimodal.jsonl").unlink()
    (folder / "notes.txt").write_text("hello")
    (folder / "extra").mkdir()
    (project.subs / "stray.jsonl").write_text("{}\n")
    (project.subs / "README.md").write_text("# submissions\n")
    report = pipeline.validate(GamutProject(project.cfg))
    assert found(report.errors) == {
        (
            "submissions/acme/multimodal.jsonl",
            "missing multimodal.jsonl (responses to the multimodal questions)",
        ),
        ("submissions/acme/notes.txt", "unexpected file"),
        ("submissions/acme/extra", "unexpected folder inside the submission"),
        ("submissions/stray.jsonl", "file outside any submission folder"),
    }


def test_symlinked_file_is_rejected_not_followed(project: Project, tmp_path: Path) -> None:
    folder = project.write("acme")
    secret = tmp_path / "secret.jsonl"
    secret.write_text("not json at all\n")
    (folder / "multimodal.jsonl").unlink()
    os.symlink(secret, folder / "multimodal.jsonl")
    report = pipeline.validate(GamutProject(project.cfg))
    assert found(report.errors) == {("submissions/acme/multimodal.jsonl", "is a symbolic link")}


def test_symlinked_folder_is_rejected(project: Project, tmp_path: Path) -> None:
    real = project.write("acme")
    os.symlink(real, project.subs / "acme2")
    report = pipeline.validate(GamutProject(project.cfg), [project.subs / "acme2"])
    assert found(report.errors) == {("submissions/acme2", "submission folder is a symbolic link")}


def test_dotdot_path_and_path_outside(project: Project, tmp_path: Path) -> None:
    project.write("acme")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    dotdot = project.subs / "acme" / ".." / ".." / "gamut.toml"
    report = pipeline.validate(GamutProject(project.cfg), [dotdot, outside])
    msgs = {p.message for p in report.errors}
    assert "path contains '..'" in msgs
    assert "outside the submissions folder submissions" in msgs
    assert report.submissions == []


def test_paths_select_submissions(project: Project) -> None:
    project.write("acme")
    project.write("other", multimodal="")
    report = pipeline.validate(
        GamutProject(project.cfg), [project.subs / "acme" / "multimodal.jsonl"]
    )
    assert report.submissions == ["acme"] and report.ok
    assert not pipeline.validate(
        GamutProject(project.cfg), [project.subs]
    ).ok  # the folder means all
    missing = pipeline.validate(GamutProject(project.cfg), [project.subs / "nobody"])
    assert [p.message for p in missing.errors] == ["no such submission folder"]


def test_invalid_id_starting_with_a_dot(project: Project) -> None:
    project.write(".hidden")
    report = pipeline.validate(GamutProject(project.cfg))
    assert "folder name '.hidden' is not a valid submission id" in {
        p.message for p in report.errors
    }


# --changed-from: a real git repository, a base commit and a change on top of it.


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(project: Project) -> Project:
    git(project.root, "init", "-q", "-b", "main")
    git(project.root, "config", "user.email", "t@example.org")
    git(project.root, "config", "user.name", "t")
    project.write("existing")
    git(project.root, "add", ".")
    git(project.root, "commit", "-q", "-m", "base")
    git(project.root, "checkout", "-q", "-b", "pr")
    return project


def test_changed_from_one_new_submission(repo: Project) -> None:
    repo.write("acme")
    git(repo.root, "add", "submissions/acme/submission.yaml")  # one committed, one untracked
    git(repo.root, "commit", "-q", "-m", "add acme")
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    assert report.submissions == ["acme"] and report.ok, report.to_text()


def test_changed_from_touching_other_files(repo: Project) -> None:
    repo.write("acme")
    (repo.root / "gamut.toml").write_text((repo.root / "gamut.toml").read_text() + "\n# tweak\n")
    (repo.subs / "existing" / "multimodal.jsonl").write_text("")
    git(repo.root, "add", ".")
    git(repo.root, "commit", "-q", "-m", "sneaky")
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    assert (
        "gamut.toml",
        "changed outside a submission folder (committed on this branch)",
    ) in found(report.errors)
    (problem,) = [p for p in report.errors if p.file == "gamut.toml"]
    assert "<submissions>" not in problem.fix and "submissions/<id>/" in problem.fix
    assert "`git checkout main -- gamut.toml` then commit" in problem.fix
    assert any(
        p.message.startswith("the change touches several submissions (acme, existing)")
        for p in report.errors
    )


def test_changed_from_names_untracked_files_and_the_real_folder(repo: Project) -> None:
    repo.write("acme")
    git(repo.root, "add", "submissions/acme")
    git(repo.root, "commit", "-q", "-m", "add acme")
    (repo.root / "questions-multimodal.jsonl").write_text("{}\n")
    (repo.root / "notes.txt").write_text("x\n")
    git(repo.root, "add", "notes.txt")
    git(repo.root, "commit", "-q", "-m", "notes")
    (repo.root / "gamut.toml").write_text((repo.root / "gamut.toml").read_text() + "\n# local\n")
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    by_file = {p.file: p for p in report.errors}
    untracked = by_file["questions-multimodal.jsonl"]
    assert untracked.message.startswith("untracked file outside a submission folder")
    assert "its own folder submissions/acme/" in untracked.fix
    assert "git clean -f -- questions-multimodal.jsonl" in untracked.fix
    assert ".gamut/" in untracked.fix
    assert by_file["gamut.toml"].message.endswith("(not committed)")
    assert "git restore -- gamut.toml" in by_file["gamut.toml"].fix
    assert "`git rm -- notes.txt` then commit" in by_file["notes.txt"].fix
    assert all("<submissions>" not in p.fix for p in report.errors)


def test_changed_from_groups_an_untracked_folder_into_one_problem(repo: Project) -> None:
    repo.write("acme")
    git(repo.root, "add", "submissions/acme")
    git(repo.root, "commit", "-q", "-m", "add acme")
    for i in range(49):
        (repo.root / "scratch" / "run" / f"out-{i}.json").parent.mkdir(parents=True, exist_ok=True)
        (repo.root / "scratch" / "run" / f"out-{i}.json").write_text("{}\n")
    (repo.root / "stray.txt").write_text("x\n")
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    files = sorted(p.file for p in report.errors)
    assert files == ["scratch/", "stray.txt"], report.to_text()
    (folder,) = [p for p in report.errors if p.file == "scratch/"]
    assert "(49 files;" in folder.message and "git clean -f -d -- scratch/" in folder.fix
    assert "its own folder submissions/acme/" in folder.fix


def test_changed_from_nothing_and_bad_ref(repo: Project) -> None:
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    assert [p.message for p in report.errors] == ["the change touches no submission"]
    bad = pipeline.validate(GamutProject(repo.cfg), changed_from="no-such-branch")
    (err,) = bad.errors
    assert err.message.startswith("cannot compare with 'no-such-branch'")
    assert "git fetch" in err.fix


def test_changed_from_updating_an_existing_submission_is_flagged(repo: Project) -> None:
    lines = (repo.subs / "existing" / "multimodal.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace("pad thai", "Pad Thai")
    (repo.subs / "existing" / "multimodal.jsonl").write_text("\n".join(lines) + "\n")
    report = pipeline.validate(GamutProject(repo.cfg), changed_from="main")
    assert report.ok and report.submissions == ["existing"]
    (w,) = report.warnings
    assert (w.file, w.message) == (
        "submissions/existing/multimodal.jsonl",
        "changes the existing submission 'existing'",
    )
