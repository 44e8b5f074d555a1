"""The collector's choice of pull requests, played for real: the step's own bash script, run in a
base checkout with real git and the real ``gamut``, against GitHub's API on 127.0.0.1.

Only ``gh`` (GitHub's CLI, which lists the open pull requests) is a stand-in: a script printing
what its ``--jq`` would. Everything the step decides with comes from ``gamut pr approved`` and
``gamut pr claimed``, which ask the fake API.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.github_api import FakeGitHub, serve_github

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "collect-batches.yml"
DEMO = ROOT / "demo"
STEP = "Take the submissions of open pull requests a maintainer approved scoring (data only)"

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                         text=True)  # fmt: skip
    return out.stdout.strip()


def _step_script() -> str:
    wf: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (step,) = [s for s in wf["jobs"]["collect"]["steps"] if s.get("name") == STEP]
    return str(step["run"])


def _submission(root: Path, sid: str, name: str, marker: str) -> list[str]:
    """A valid submission (a demo one, renamed), whose responses carry ``marker``."""
    src = DEMO / "submissions" / "brassbell-bold"
    dest = root / "submissions" / sid
    dest.mkdir(parents=True)
    for f in src.iterdir():
        text = f.read_text(encoding="utf-8")
        if f.name == "submission.yaml":
            text = text.replace("Brassbell Bold", name).replace("demo: true", "demo: false")
        else:
            text = text.replace('"response":"', f'"response":"{marker} ', 1)
        (dest / f.name).write_text(text, encoding="utf-8")
    return [f"submissions/{sid}/{f.name}" for f in sorted(dest.iterdir())]


def _branch(up: Path, number: int, files: dict[str, tuple[str, str]]) -> tuple[str, list[str]]:
    """Commit a pull request's submissions on a branch and publish it as refs/pull/N/head."""
    _git(up, "checkout", "-q", "-b", f"pr-{number}", "main")
    changed: list[str] = []
    for sid, (name, marker) in files.items():
        changed += _submission(up, sid, name, marker)
    _git(up, "add", "-A")
    _git(up, "commit", "-q", "-m", f"PR {number}")
    sha = _git(up, "rev-parse", "HEAD")
    _git(up, "update-ref", f"refs/pull/{number}/head", sha)
    _git(up, "checkout", "-q", "main")
    return sha, changed


def test_only_approved_heads_are_taken_each_into_its_own_folder(tmp_path: Path) -> None:
    up = tmp_path / "up"
    up.mkdir()
    for name in ("gamut.toml", "questions.jsonl"):
        shutil.copy(DEMO / name, up / name)
    shutil.copytree(DEMO / "rubrics", up / "rubrics")
    shutil.copytree(DEMO / "submissions" / "brassbell-bold", up / "submissions" / "brassbell-bold")
    _git(up, "init", "-q", "-b", "main")
    _git(up, "config", "user.email", "t@example.org")
    _git(up, "config", "user.name", "t")
    _git(up, "add", "-A")
    _git(up, "commit", "-q", "-m", "base")

    fake = FakeGitHub()
    prs = {
        3: _branch(up, 3, {"new-model": ("New Model", "FIRST")}),  # approved: taken
        5: _branch(up, 5, {"new-model": ("Other Model", "SECOND")}),  # approved, same id
        7: _branch(up, 7, {"third-model": ("Third Model", "THIRD")}),  # never approved
        9: _branch(up, 9, {"fourth-model": ("Fourth Model", "FOURTH")}),  # approved, then pushed
    }
    fake.pulls = dict(prs)
    fake.add_run(103, prs[3][0], approved_for=["submission-scoring"])
    fake.add_run(105, prs[5][0], approved_for=["submission-scoring"])
    fake.add_run(107, prs[7][0], approved_for=None)  # waiting for a reviewer
    fake.add_run(109, "e" * 40, approved_for=["submission-scoring"])  # an older head of PR 9

    base = tmp_path / "checkout"
    _git(tmp_path, "clone", "-q", "--branch", "main", str(up), str(base))
    (base / ".venv" / "bin").mkdir(parents=True)
    (base / ".venv" / "bin" / "gamut").symlink_to(Path(sys.executable).parent / "gamut")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listing = tmp_path / "open-pulls.txt"  # what `gh api ... --jq` prints, newest first
    listing.write_text("".join(f"{n} {sha}\n" for n, (sha, _) in sorted(prs.items())[::-1]))
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\ncat "{listing}"\n')
    gh.chmod(0o755)
    runner = tmp_path / "runner"
    runner.mkdir()

    with serve_github(fake):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))},
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "RUNNER_TEMP": str(runner),
            "GITHUB_REPOSITORY": fake.repo,
            "GITHUB_API_URL": fake.url,
            "GH_TOKEN": fake.token,
            "GAMUT_CONFIG": "gamut.toml",
        }
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step_script()],
            cwd=base, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert (runner / "prs.txt").read_text() == "3 new-model\n", out
    assert "::notice::PR #7: no maintainer-approved score-submission run" in out
    assert "::notice::PR #9: no maintainer-approved score-submission run" in out
    assert "::warning::PR #5: submission id new-model is held by PR #3; skipped" in out
    # the first pull request's own files, never the second's
    responses = (base / "submissions" / "new-model" / "multimodal.jsonl").read_text()
    assert "FIRST" in responses and "SECOND" not in responses
    assert not (base / "submissions" / "third-model").exists()
    assert not (base / "submissions" / "fourth-model").exists()
    # what was not approved was not even fetched
    refs = _git(base, "for-each-ref", "--format=%(refname)", "refs/gamut/")
    assert refs.split() == ["refs/gamut/pr-3"]
