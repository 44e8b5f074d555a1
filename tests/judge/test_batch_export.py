"""``gamut judge --export-batch`` with held rubrics: the request files hold check text, so they
go only to a private folder, 0600 in a 0700 folder."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.judge.project import TOTAL_CALLS, check_of, openai_judge, write_project


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _project(root: Path, public: bool = False) -> str:
    cfg = write_project(root, openai_judge("http://127.0.0.1:9/v1", "local"), public=public)
    text = cfg.read_text().replace('results = "results"', 'results = "results"\nprivate = "priv"')
    cfg.write_text(text + '\n[site]\nout = "public_html"\n')
    return str(cfg)


@pytest.mark.parametrize(
    "where",
    ["results", "results/batch", "public_html/x", "submissions/alpha", "site_src/batch", "link"],
)
def test_held_requests_are_refused_in_a_published_folder(tmp_path: Path, where: str) -> None:
    root = tmp_path / "proj"
    cfg = _project(root)
    (root / "results").mkdir()
    (root / "link").symlink_to(root / "results")  # a link into the results is the results
    out = root / where
    code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
    assert code == 1, text
    assert "hold the check text of held rubrics" in text and "published or committed" in text
    assert "give a folder outside the repository, or under the private store" in text
    assert str(root / "priv" / "batch") in text and "Traceback" not in text
    assert not any(p.name.startswith("local-") for p in root.rglob("*"))


def test_held_requests_are_refused_anywhere_in_a_git_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    cfg = _project(repo / "deploy")
    (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")  # a worktree's file
    code, text = _run("judge", "--config", cfg, "--export-batch", str(repo / "notes" / "batch"))
    assert code == 1 and f"inside the git work tree {repo}," in text, text
    assert not (repo / "notes").exists()
    # the private store is never published: allowed, as is a folder outside the repository
    for out in (repo / "deploy" / "priv" / "batch", tmp_path / "elsewhere" / "batch"):
        code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
        assert code == 0, text
        (req,) = out.glob("*.jsonl")
        assert stat.S_IMODE(out.stat().st_mode) == 0o700
        assert stat.S_IMODE(req.stat().st_mode) == 0o600
        assert len(req.read_text().splitlines()) == TOTAL_CALLS


def test_held_requests_are_refused_in_a_folder_open_to_others(tmp_path: Path) -> None:
    cfg = _project(tmp_path / "proj")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    code, text = _run("judge", "--config", cfg, "--export-batch", str(shared))
    assert code == 1 and "open to others (mode 755" in text and "chmod 700" in text, text
    assert not list(shared.iterdir())


def test_public_requests_go_anywhere_with_ordinary_modes(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    cfg = _project(root, public=True)
    out = root / "results" / "batch"
    code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
    assert code == 0, text
    (req,) = out.glob("*.jsonl")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(req.stat().st_mode) == 0o666 & ~umask
    body = json.loads(req.read_text().splitlines()[0])["body"]
    assert check_of(body)  # the check text is in the request: why held ones are kept private
