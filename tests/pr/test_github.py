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
from gamut.github import GitHub, approved_score_run, claim_time, claimed_by, open_pulls
from scoring.errors import GamutError
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
    with pytest.raises(GamutError, match=f"HTTP {status}.*permissions"):
        approved_score_run(_client(fake), A)


def test_a_wrong_token_is_refused(fake: FakeGitHub) -> None:
    with pytest.raises(GamutError, match="HTTP 401"):
        approved_score_run(GitHub(fake.repo, "wrong", fake.url), A)
    with pytest.raises(GamutError, match="40 lowercase hex"):
        approved_score_run(_client(fake), "HEAD")


def test_open_pulls_follow_the_pages(fake: FakeGitHub) -> None:
    fake.page_size = 2
    fake.pulls = {n: (sha, []) for n, sha in [(5, A), (3, B), (9, C), (4, A), (7, B)]}
    pulls = open_pulls(_client(fake))
    assert [(p.number, p.sha) for p in pulls] == [(3, B), (4, A), (5, A), (7, B), (9, C)]
    assert pulls[0].head_repo == "user3/repo" and pulls[0].head_ref == "patch"
    assert sum("/pulls?" in r for r in fake.requests) == 3


SCORING = ["submission-scoring"]
D, E, F = "d" * 40, "e" * 40, "f" * 40


def _folder(sid: str, *names: str) -> list[str]:
    return [f"submissions/{sid}/{n}" for n in (names or ("submission.yaml", "multimodal.jsonl"))]


def _holders(fake: FakeGitHub, sid: str = "new-model") -> dict[int, int | None]:
    """Who holds ``sid`` against each open pull request."""
    gh = _client(fake)
    return {n: claimed_by(gh, n, sid, "submissions") for n in sorted(fake.pulls)}


def test_an_id_belongs_to_the_pull_request_whose_scoring_took_it_first(fake: FakeGitHub) -> None:
    fake.pulls = {
        3: (A, _folder("other-model")),
        5: (B, _folder("new-model")),
        8: (C, _folder("new-model", "multimodal.jsonl")),
    }
    fake.add_run(10, A, SCORING, pr=3)
    fake.add_run(11, C, SCORING, pr=8)  # the higher number was approved first
    fake.add_run(12, B, SCORING, pr=5)
    assert _holders(fake) == {3: 8, 5: 8, 8: None}  # (3 would, if it moved to new-model)
    gh = _client(fake)
    assert claimed_by(gh, 3, "other-model", "submissions") is None
    assert claimed_by(gh, 5, "new-model", "elsewhere") is None  # folder names are exact
    assert claim_time(gh, open_pulls(gh)[2], "new-model", "submissions") == (
        "2026-12-01T00:00:04Z",
        11,
    )


@pytest.mark.parametrize("first", [5, 8])
def test_two_scorable_pull_requests_on_one_id_in_either_order(fake: FakeGitHub, first: int) -> None:
    fake.pulls = {5: (A, _folder("new-model")), 8: (B, _folder("new-model"))}
    later = 13 - first
    fake.add_run(20, fake.pulls[first][0], SCORING, pr=first)
    fake.add_run(21, fake.pulls[later][0], None, pr=later)  # validated, not approved yet
    assert _holders(fake) == {first: None, later: first}
    fake.approvals[21] = fake.approvals[20]  # approved now: still after the first
    assert _holders(fake) == {first: None, later: first}


def test_a_pull_request_that_can_never_be_scored_holds_nothing(fake: FakeGitHub) -> None:
    """The attack: an old pull request that touches several folders and the README (even one a
    maintainer once approved) pushes one file into a newcomer's folder."""
    squat = ["README.md", *_folder("a"), *_folder("b"), "submissions/new-model/x.jsonl"]
    fake.pulls = {2: (A, squat), 9: (B, _folder("new-model"))}
    fake.add_run(30, A, SCORING, pr=2)
    fake.add_run(31, B, SCORING, pr=9)
    assert _holders(fake) == {2: 9, 9: None}


def test_one_pull_request_cannot_squat_many_ids(fake: FakeGitHub) -> None:
    ids = ["m1", "m2", "m3"]
    fake.pulls = {1: (A, [f for i in ids for f in _folder(i)])}
    fake.pulls |= {n: (sha, _folder(i)) for n, sha, i in [(6, B, "m1"), (7, C, "m2"), (8, D, "m3")]}
    fake.add_run(40, A, SCORING, pr=1)
    for run_id, n in [(41, 6), (42, 7), (43, 8)]:
        fake.add_run(run_id, fake.pulls[n][0], SCORING, pr=n)
    gh = _client(fake)
    assert [claimed_by(gh, n, i, "submissions") for n, i in [(6, "m1"), (7, "m2"), (8, "m3")]] == [
        None,
        None,
        None,
    ]


def test_a_pull_request_that_becomes_scorable_later_takes_the_id_only_then(
    fake: FakeGitHub,
) -> None:
    fake.pulls = {3: (A, ["README.md", *_folder("new-model")]), 8: (C, _folder("new-model"))}
    fake.add_run(50, A, SCORING, pr=3)  # approved while it also changed the README
    fake.add_run(51, C, SCORING, pr=8)  # the newcomer, approved
    assert _holders(fake) == {3: 8, 8: None}
    fake.pulls[3] = (B, _folder("new-model"))  # drops the README change
    fake.commits[A] = ["README.md", *_folder("new-model")]  # its old commit still did
    assert _holders(fake) == {3: 8, 8: None}  # A's approval is not a claim on new-model
    fake.add_run(52, B, SCORING, pr=3)
    assert _holders(fake) == {3: 8, 8: None}  # its first clean scoring came second


def test_a_folder_renamed_later_is_a_new_claim(fake: FakeGitHub) -> None:
    fake.pulls = {4: (A, _folder("harmless")), 8: (C, _folder("new-model"))}
    fake.add_run(60, A, SCORING, pr=4)  # took "harmless" first
    fake.add_run(61, C, SCORING, pr=8)
    fake.commits[A] = _folder("harmless")
    fake.pulls[4] = (B, _folder("new-model"))  # then moved into the newcomer's id
    assert _holders(fake) == {4: 8, 8: None}
    fake.add_run(62, B, SCORING, pr=4)
    assert _holders(fake) == {4: 8, 8: None}


def test_a_commit_copied_from_the_newcomers_branch_brings_no_claim(fake: FakeGitHub) -> None:
    """An old pull request whose branch now holds the newcomer's approved commit: that commit's
    approval was of the newcomer's branch, before the copy was validated on the other."""
    fake.pulls = {3: (D, ["README.md"]), 8: (C, _folder("new-model"))}
    fake.add_run(69, D, None, pr=3)  # the old one's branch was validated before
    fake.add_run(70, C, SCORING, pr=8)
    fake.pulls[3] = (C, _folder("new-model"))
    fake.add_run(71, C, SCORING, pr=3)  # even approved on its own branch: later
    assert _holders(fake) == {3: 8, 8: None}
    fake.add_run(72, C, SCORING, validated=False)  # an approved run with no validation here
    fake.pulls[5] = (C, _folder("new-model"))
    assert _holders(fake) == {3: 8, 5: 8, 8: None}


@pytest.mark.parametrize(
    "setup",
    [
        lambda f: f.add_run(80, B, None, pr=5),  # never approved
        lambda f: f.add_run(81, B, ["other"], pr=5),  # approved for another Environment
        lambda f: f.add_run(82, B, SCORING, pr=5, event="workflow_dispatch"),
        lambda f: f.add_run(83, B, SCORING, validated=False),  # validated on no branch of its
        lambda f: f.opened.update({5: "2026-12-31T00:00:00Z"}) or f.add_run(84, B, SCORING, pr=5),
        lambda f: (
            f.commits.update({B: ["submissions/new-model/a", "x"]})
            or f.add_run(85, B, SCORING, pr=5)
        ),
    ],
)  # the last two: validated before it was opened (a reused branch); the commit changed more
def test_a_rival_that_never_took_the_id_holds_nothing(fake: FakeGitHub, setup: object) -> None:
    fake.pulls = {5: (B, _folder("new-model")), 9: (C, _folder("new-model"))}
    setup(fake)  # type: ignore[operator]
    assert claimed_by(_client(fake), 9, "new-model", "submissions") is None


def test_runs_of_one_second_are_ordered_by_run_id(fake: FakeGitHub) -> None:
    fake.pulls = {5: (A, _folder("new-model")), 8: (B, _folder("new-model"))}
    same = "2026-12-01T01:00:00Z"
    fake.add_run(91, A, SCORING, pr=5, created_at=same)
    fake.add_run(90, B, SCORING, pr=8, created_at=same)
    assert _holders(fake) == {5: 8, 8: None}


def test_a_pull_request_with_no_claim_of_its_own_defers_to_one_with(fake: FakeGitHub) -> None:
    fake.pulls = {5: (A, _folder("new-model")), 8: (B, _folder("new-model"))}
    assert _holders(fake) == {5: None, 8: None}  # nobody took it: free (the run would take it)
    fake.add_run(95, B, SCORING, pr=8)
    assert _holders(fake) == {5: 8, 8: None}
    assert claimed_by(_client(fake), 99, "new-model", "submissions") == 8  # not open at all


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
    fake.add_run(22, A, approved_for=["submission-scoring"], pr=4)
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
