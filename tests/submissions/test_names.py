"""Two submissions with one display name: the one git history had first keeps it.

Whole-folder validation (what `gamut run`, `gamut score` and publish do) used to leave out the
lexicographically later id, so a newcomer named ``alpha-second`` evicted the incumbent
``zeta-first``. Real git repositories in tmp_path; commit dates are set to lie.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project as GamutProject
from tests.submissions.helpers import GOOD_META, RESPONSES, Project, good_lines, reordered

REPO = Path(__file__).resolve().parents[2]
NAME = "Acme-VL 2"


def _git(root: Path, *args: str, date: str | None = None) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    if date is not None:  # what a pull request's author can set to anything
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        env=env,
    )


def _commit(root: Path, message: str, date: str | None = None) -> None:
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message, date=date)


def _write(project: Project, sid: str, variant: int) -> None:
    texts = RESPONSES if variant == 0 else reordered(RESPONSES)
    project.write(sid, multimodal=good_lines(texts), meta={**GOOD_META, "model_name": NAME})


def _named(root: Path) -> set[str]:
    """The submissions whole-folder validation names for a taken model name."""
    report = pipeline.validate(GamutProject(load_config(root / "gamut.toml")))
    return {p.file.split("/")[1] for p in report.errors if "is already the name of" in p.message}


def test_the_incumbent_keeps_its_name_in_the_work_tree_and_after_the_merge(
    project: Project,
) -> None:
    _git(project.root, "init", "-q", "-b", "main")
    _write(project, "zeta-first", 0)
    _commit(project.root, "zeta-first")
    _write(project, "alpha-second", 1)
    assert _named(project.root) == {"alpha-second"}  # as a scoring run sees a pull request
    _commit(project.root, "alpha-second", date="1990-01-01T00:00:00Z")  # a lying date
    assert _named(project.root) == {"alpha-second"}  # as the publish run after the merge


def test_a_branch_older_than_the_incumbent_merged_later_does_not_take_the_name(
    project: Project,
) -> None:
    _git(project.root, "init", "-q", "-b", "main")
    (project.subs / ".gitkeep").write_text("")
    _commit(project.root, "start")
    _git(project.root, "checkout", "-qb", "newcomer")
    _write(project, "alpha-second", 1)
    _commit(project.root, "alpha-second", date="2001-01-01T00:00:00Z")
    _git(project.root, "checkout", "-q", "main")
    _write(project, "zeta-first", 0)
    _commit(project.root, "zeta-first", date="2030-01-01T00:00:00Z")
    _git(project.root, "merge", "-q", "--no-ff", "-m", "merge", "newcomer")
    assert _named(project.root) == {"alpha-second"}  # main had zeta-first first


def test_without_history_both_are_named_and_neither_preferred(project: Project) -> None:
    _write(project, "zeta-first", 0)
    _write(project, "alpha-second", 1)
    assert _named(project.root) == {"alpha-second", "zeta-first"}  # no git repository
    _git(project.root, "init", "-q", "-b", "main")
    assert _named(project.root) == {"alpha-second", "zeta-first"}  # no commit yet
    _commit(project.root, "both at once")
    assert _named(project.root) == {"alpha-second", "zeta-first"}  # one commit added both
    report = pipeline.validate(
        GamutProject(load_config(project.root / "gamut.toml")), [project.subs / "zeta-first"]
    )
    assert [p.message for p in report.errors] == [
        f"model_name {NAME!r} is already the name of submission 'alpha-second'"
    ]


def test_a_copy_on_the_demo_does_not_evict_the_submission_it_copies(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(REPO / "demo", root, ignore=shutil.ignore_patterns(".gamut", "site"))
    _git(root, "init", "-q", "-b", "main")
    _commit(root, "demo")
    shutil.copytree(root / "submissions" / "hushmoth-careful", root / "submissions" / "dup-name")
    assert _named(root) == {"dup-name"}
