"""What the workflows ask GitHub: a maintainer's approval of a head commit, and who holds an id.

Against a real HTTP server on 127.0.0.1 speaking GitHub's REST API (tests/fakes/github_api.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from gamut.comment import MARKER
from gamut.github import GitHub, GitHubError, approved_score_run, claimed_by, open_pulls
from tests.fakes.github_api import FakeGitHub, serve_github
from tests.hub.conftest import write_config

A, B, C = "a" * 40, "b" * 40, "c" * 40


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with serve_github(FakeGitHub()) as gh:
        yield gh


def _client(fake: FakeGitHub) -> GitHub:
    return GitHub(fake.repo, fake.token, fake.url)


def test_a_run_approved_for_the_scoring_environment_counts(fake: FakeGitHub) -> None:
    fake.add_run(10, B, approved_for=["submission-scoring"])  # another pull request's, before
    fake.add_run(11, A, approved_for=["submission-scoring"])
    fake.add_run(12, C, approved_for=["submission-scoring"])  # and after
    found = approved_score_run(_client(fake), A)
    assert found is not None and (found.run_id, found.approver) == (11, "maintainer")
    # GitHub gives a run started by workflow_run the default branch's sha: the head commit is
    # found by the run's title, among the runs since that commit's validation
    assert any("validate-submission.yml/runs" in r and f"head_sha={A}" in r for r in fake.requests)
    assert any("score-submission.yml/runs" in r and "created=%3E%3D" in r for r in fake.requests)
    assert any(r.endswith("/actions/runs/11/approvals") for r in fake.requests)
    assert not any(r.endswith("/actions/runs/10/approvals") for r in fake.requests)


def test_a_run_whose_head_sha_is_the_pull_requests_counts_too(fake: FakeGitHub) -> None:
    fake.add_run(13, A, approved_for=["submission-scoring"], head_sha=A, title="Score")
    found = approved_score_run(_client(fake), A)
    assert found is not None and found.run_id == 13


@pytest.mark.parametrize(
    ("case", "setup"),
    [
        ("no run at all", lambda f: None),
        ("a run nobody approved (still waiting)", lambda f: f.add_run(12, A, approved_for=None)),
        ("approved for another Environment", lambda f: f.add_run(13, A, approved_for=["other"])),
        ("an approved run of an older head", lambda f: f.add_run(14, B, ["submission-scoring"])),
        ("approved, but not started by workflow_run",
         lambda f: f.add_run(15, A, ["submission-scoring"], event="workflow_dispatch")),
        ("a pull request's own copy of the workflow, titled with the sha",
         lambda f: f.add_run(19, A, ["submission-scoring"], event="pull_request", head_sha=A)),
    ],
)  # fmt: skip
def test_anything_else_is_not_an_approval(fake: FakeGitHub, case: str, setup: object) -> None:
    setup(fake)  # type: ignore[operator]
    assert approved_score_run(_client(fake), A) is None, case


def test_a_rejection_is_not_an_approval(fake: FakeGitHub) -> None:
    fake.add_run(16, A, approved_for=["submission-scoring"])
    fake.approvals[16][0]["state"] = "rejected"
    assert approved_score_run(_client(fake), A) is None


def test_the_head_sha_is_checked_even_when_the_api_does_not_filter(fake: FakeGitHub) -> None:
    fake.ignore_sha_filter = True
    fake.add_run(17, B, approved_for=["submission-scoring"], head_sha=B)  # another commit's
    assert approved_score_run(_client(fake), A) is None
    fake.add_run(18, A, approved_for=["submission-scoring"])
    found = approved_score_run(_client(fake), A)
    assert found is not None and found.run_id == 18


@pytest.mark.parametrize("status", [401, 403, 404, 500])
def test_an_api_failure_is_a_named_error_never_an_answer(fake: FakeGitHub, status: int) -> None:
    fake.fail_with = status
    with pytest.raises(GitHubError, match=f"HTTP {status}.*permissions"):
        approved_score_run(_client(fake), A)


def test_a_wrong_token_is_refused(fake: FakeGitHub) -> None:
    with pytest.raises(GitHubError, match="HTTP 401"):
        approved_score_run(GitHub(fake.repo, "wrong", fake.url), A)
    with pytest.raises(GitHubError, match="40 lowercase hex"):
        approved_score_run(_client(fake), "HEAD")


def test_open_pulls_follow_the_pages(fake: FakeGitHub) -> None:
    fake.page_size = 2
    fake.pulls = {n: (sha, []) for n, sha in [(5, A), (3, B), (9, C), (4, A), (7, B)]}
    assert open_pulls(_client(fake)) == [(3, B), (4, A), (5, A), (7, B), (9, C)]
    assert sum("/pulls?" in r for r in fake.requests) == 3


def test_an_id_belongs_to_the_first_open_pull_request(fake: FakeGitHub) -> None:
    fake.pulls = {
        3: (A, ["submissions/other-model/submission.yaml"]),
        5: (B, ["submissions/new-model/submission.yaml", "submissions/new-model/x.jsonl"]),
        8: (C, ["submissions/new-model/multimodal.jsonl"]),
    }
    gh = _client(fake)
    assert claimed_by(gh, 8, "new-model", "submissions") == 5
    assert claimed_by(gh, 5, "new-model", "submissions") is None  # the first keeps it
    assert claimed_by(gh, 3, "other-model", "submissions") is None
    assert claimed_by(gh, 8, "new-model", "elsewhere") is None  # folder names are exact


def _git_config(tmp_path: Path) -> Path:
    cfg = write_config(tmp_path / "repo", "rubrics")
    subprocess.run(["git", "init", "-q", str(cfg.parent)], check=True)
    return cfg


def test_the_cli_answers_in_output_lines(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", fake.repo)
    monkeypatch.setenv("GH_TOKEN", fake.token)
    fake.add_run(21, A, approved_for=["submission-scoring"])
    r = CliRunner().invoke(main, ["pr", "approved", "--sha", A])
    assert r.exit_code == 0 and r.stdout == "approved=true\nrun_id=21\napprover=maintainer\n"
    r = CliRunner().invoke(main, ["pr", "approved", "--sha", B])
    assert r.exit_code == 0 and r.stdout == "approved=false\n"
    fake.fail_with = 502
    r = CliRunner().invoke(main, ["pr", "approved", "--sha", A])
    assert r.exit_code == 1 and "HTTP 502" in r.stderr and "approved=" not in r.stdout
    fake.fail_with = None

    cfg = _git_config(tmp_path)
    fake.pulls = {4: (A, ["submissions/new-model/submission.yaml"]),
                  6: (B, ["submissions/new-model/multimodal.jsonl"])}  # fmt: skip
    out = tmp_path / "refusal.md"
    args = ["pr", "claimed", "--config", str(cfg), "--comment-out", str(out)]
    r = CliRunner().invoke(main, [*args, "--pr", "6"])
    assert r.exit_code == 0, r.output
    assert r.stdout == "submission_id=new-model\nclaimed_by=4\n"
    text = out.read_text(encoding="utf-8")
    assert text.startswith(MARKER + "\n") and "pull request #4" in text
    assert "`submissions/new-model/`" in text and "nothing was judged" in text
    out.unlink()
    r = CliRunner().invoke(main, [*args, "--pr", "4", "--submission", "new-model"])
    assert r.exit_code == 0 and r.stdout == "submission_id=new-model\nclaimed_by=\n"
    assert not out.exists()  # no refusal, no comment


def test_claimed_refuses_ids_it_cannot_vouch_for(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GH_TOKEN", fake.token)
    cfg = _git_config(tmp_path)
    fake.pulls = {
        4: (A, ["submissions/a/submission.yaml", "submissions/b/submission.yaml"]),
        5: (B, ["submissions/x\nclaimed_by=/submission.yaml"]),
    }
    base = ["pr", "claimed", "--config", str(cfg), "--repo", fake.repo]
    r = CliRunner().invoke(main, [*base, "--pr", "4"])
    assert r.exit_code == 1 and "2 submission folders" in r.stderr and r.stdout == ""
    r = CliRunner().invoke(main, [*base, "--pr", "5"])  # a name that would forge an output line
    assert r.exit_code == 1 and "not a valid submission id" in r.stderr and r.stdout == ""
    monkeypatch.delenv("GH_TOKEN")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    r = CliRunner().invoke(main, [*base, "--pr", "4"])
    assert r.exit_code == 1 and "set GH_TOKEN" in r.stderr


def test_an_id_already_on_main_is_refused_with_a_comment(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merged submission is never replaced by a pull request: its id is held by `main` (the
    base commit, not the work tree `gamut pr take` writes into)."""
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GH_TOKEN", fake.token)
    cfg = _git_config(tmp_path)
    repo = cfg.parent
    merged = repo / "submissions" / "old-model"
    merged.mkdir(parents=True)
    (merged / "submission.yaml").write_text("model_name: Old\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "merged"], check=True)
    # a new id that only the work tree has (as after `gamut pr take`) is not held by main
    (repo / "submissions" / "new-model").mkdir()
    (repo / "submissions" / "new-model" / "submission.yaml").write_text("x: 1\n")
    fake.pulls = {7: (A, ["submissions/old-model/multimodal.jsonl"]),
                  8: (B, ["submissions/new-model/submission.yaml"])}  # fmt: skip
    out = tmp_path / "refusal.md"
    base = ["pr", "claimed", "--config", str(cfg), "--repo", fake.repo, "--comment-out", str(out)]
    r = CliRunner().invoke(main, [*base, "--pr", "7"])
    assert r.exit_code == 0, r.output
    assert r.stdout == "submission_id=old-model\nclaimed_by=main\n"
    assert "already held by main" in r.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith(MARKER + "\n") and "already on `main`" in text
    assert "new id" in text and "nothing was judged" in text
    out.unlink()
    r = CliRunner().invoke(main, [*base, "--pr", "8"])
    assert r.exit_code == 0 and r.stdout == "submission_id=new-model\nclaimed_by=\n"
    assert not out.exists()
