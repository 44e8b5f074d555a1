"""The scoring job takes the submission from the pull request's head commit, as data."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from gamut.pr_source import take_from_commit
from gamut.project import Project
from scoring.errors import GamutError, ProblemsError
from tests.hub.conftest import write_config

MM = '{"question_id": "q1", "response": "r"}\n'


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return out.stdout.decode().strip()


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A base repository with one submission; returns the root and the base commit."""
    root = tmp_path / "repo"
    write_config(root, "rubrics")
    (root / "submissions" / "existing").mkdir(parents=True)
    (root / "submissions" / "existing" / "submission.yaml").write_text("model_name: E\n")
    (root / "submissions" / "existing" / "multimodal.jsonl").write_text(MM)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root, git(root, "rev-parse", "HEAD")


def _pr(root: Path, files: dict[str, str | None], symlinks: dict[str, str] | None = None) -> str:
    """Commit a pull request's changes on a branch, go back to main; returns the head sha."""
    git(root, "checkout", "-q", "-b", f"pr{len(files)}{len(symlinks or {})}")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    for rel, target in (symlinks or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pr")
    head = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    return head


def test_the_head_commits_files_replace_whatever_the_artifact_held(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    head = _pr(root, {"submissions/new-model/submission.yaml": "model_name: N\n",
                      "submissions/new-model/multimodal.jsonl": MM})  # fmt: skip
    # the artifact (from the run that executed PR code) put other responses in place
    dest = root / "submissions" / "new-model"
    dest.mkdir()
    (dest / "multimodal.jsonl").write_text('{"question_id": "q1", "response": "FORGED"}\n')
    (dest / "extra.txt").write_text("forged")
    info, warnings = take_from_commit(Project.load(root / "gamut.toml"), 7, head, base)
    assert (info.pr_number, info.head_sha, info.submission_id) == (7, head, "new-model")
    assert sorted(p.name for p in dest.iterdir()) == ["multimodal.jsonl", "submission.yaml"]
    assert (dest / "multimodal.jsonl").read_text() == MM
    assert warnings == []
    assert git(root, "status", "--porcelain", "--", "gamut.toml") == ""  # nothing checked out


def test_changing_an_existing_submission_is_a_warning_in_the_report(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    head = _pr(root, {"submissions/existing/multimodal.jsonl": '{"question_id": "q1", '
                      '"response": "other"}\n'})  # fmt: skip
    report = tmp_path / "take.json"
    result = CliRunner().invoke(
        main,
        ["pr", "take", "--config", str(root / "gamut.toml"), "--pr", "3", "--head-sha", head,
         "--base", base, "--report", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "submission_id=existing" in result.output
    (w,) = json.loads(report.read_text())["problems"]
    assert (
        w["severity"] == "warning" and "changes the existing submission 'existing'" in w["message"]
    )


@pytest.mark.parametrize(
    "files,symlinks,message",
    [
        ({"gamut.toml": "# tampered\n", "submissions/a-model/multimodal.jsonl": MM}, None,
         "changed outside a submission folder"),
        ({"submissions/a-model/multimodal.jsonl": MM, "submissions/b-model/multimodal.jsonl": MM},
         None, "must change exactly one submission"),
        ({"submissions/a-model/multimodal.jsonl": MM}, {"submissions/a-model/submission.yaml":
         "../../gamut.toml"}, "is a symbolic link"),
        ({"submissions/a-model/multimodal.jsonl": MM, "submissions/a-model/run.sh": "echo"},
         None, "unexpected file"),
        ({"submissions/a-model/deep/multimodal.jsonl": MM}, None,
         "changed outside a submission folder"),
    ],
    ids=["other file", "two submissions", "symlink", "extra file", "nested folder"],
)  # fmt: skip
def test_a_commit_that_breaks_a_rule_is_not_taken(
    tmp_path: Path, files: dict[str, str], symlinks: dict[str, str] | None, message: str
) -> None:
    root, base = _repo(tmp_path)
    head = _pr(root, files, symlinks)
    with pytest.raises(ProblemsError) as err:
        take_from_commit(Project.load(root / "gamut.toml"), 7, head, base)
    assert any(message in p.message for p in err.value.problems), err.value
    assert not (root / "submissions" / "a-model").exists()


@pytest.mark.parametrize("base", ["--output=/tmp/x", "no-such-ref", ""])
def test_revisions_are_checked_and_never_options(tmp_path: Path, base: str) -> None:
    root, _ = _repo(tmp_path)
    head = _pr(root, {"submissions/new-model/multimodal.jsonl": MM})
    with pytest.raises(GamutError):
        take_from_commit(Project.load(root / "gamut.toml"), 7, head, base)
    with pytest.raises(GamutError, match="40 lowercase hex"):
        take_from_commit(Project.load(root / "gamut.toml"), 7, "--all", "main")
