"""The change feed: the changes read from a repository's history (a submission added, its
responses changed, a new benchmark version, new judges), written as Atom with one entry each;
no history (no git, a shallow clone) is said, never guessed."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from gamut.config import GamutConfig
from gamut.history import read_history
from generator.feed import ATOM, feed_xml
from generator.spec import ChangeKind

A = f"{{{ATOM}}}"
CONFIG = """[benchmark]
questions = "questions.jsonl"
rubrics = "{rubrics}"

[judges.{judge}]
provider = "replay"
"""


def _git(repo: Path, *args: str, when: str = "2026-01-01T00:00:00+00:00") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def _commit(repo: Path, when: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change", when=when)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "submissions" / "alpha").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "gamut.toml").write_text(CONFIG.format(rubrics="hf://datasets/o/r@v1", judge="one"))
    _commit(repo, "2026-01-01T10:00:00+02:00")  # the config's first version: no change
    (repo / "submissions" / "alpha" / "submission.yaml").write_text("model_name: Alpha\n")
    (repo / "submissions" / "alpha" / "multimodal.jsonl").write_text("{}\n")
    _commit(repo, "2026-02-01T00:00:00+00:00")
    (repo / "submissions" / "alpha" / "multimodal.jsonl").write_text('{"a": 1}\n')
    _commit(repo, "2026-03-01T00:00:00+00:00")
    (repo / "gamut.toml").write_text(CONFIG.format(rubrics="hf://datasets/o/r@v2", judge="one"))
    _commit(repo, "2026-04-01T00:00:00+00:00")
    (repo / "gamut.toml").write_text(CONFIG.format(rubrics="hf://datasets/o/r@v2", judge="two"))
    (repo / "README").write_text("unrelated\n")
    _commit(repo, "2026-05-01T00:00:00-05:00")
    return repo


def test_each_kind_of_change_is_read_from_the_history_newest_first(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    history = read_history(repo / "gamut.toml", repo / "submissions")
    assert history.unavailable is None
    got = [(c.kind, c.submission_id, c.when, c.detail) for c in history.changes]
    assert got == [
        (ChangeKind.JUDGES, None, "2026-05-01T05:00:00Z", ""),  # times in UTC
        (ChangeKind.BENCHMARK, None, "2026-04-01T00:00:00Z", "hf://datasets/o/r@v2"),
        (ChangeKind.RESPONSES, "alpha", "2026-03-01T00:00:00Z", ""),
        (ChangeKind.SUBMISSION, "alpha", "2026-02-01T00:00:00Z", ""),
    ]


def test_the_feed_is_atom_with_one_linked_entry_per_change(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    history = read_history(repo / "gamut.toml", repo / "submissions")
    doc = feed_xml(
        history, {"alpha": "Alpha <b>"}, title="LB", url="https://x.org/lb", updated="2026-06-01"
    )
    root = ET.fromstring(doc)
    assert root.tag == f"{A}feed"
    assert root.findtext(f"{A}id") == "https://x.org/lb/feed.xml"
    assert root.findtext(f"{A}updated") == "2026-05-01T05:00:00Z"  # the newest entry's
    assert root.find(f"{A}author/{A}name") is not None  # required when entries have none
    entries = root.findall(f"{A}entry")
    assert [e.findtext(f"{A}title") for e in entries] == [
        "The judges changed",
        "New benchmark version: hf://datasets/o/r@v2",
        "Responses updated: Alpha <b>",  # text, escaped in the XML
        "New submission: Alpha <b>",
    ]
    assert b"Alpha &lt;b&gt;" in doc
    links = [e.find(f"{A}link").get("href") for e in entries]  # type: ignore[union-attr]
    assert links[-1] == "https://x.org/lb/submissions/alpha.html"
    assert len({e.findtext(f"{A}id") for e in entries}) == 4


def test_a_shallow_clone_or_no_git_has_no_changes_and_says_why(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)],
        check=True,
        capture_output=True,
    )
    got = read_history(shallow / "gamut.toml", shallow / "submissions")
    assert got.changes == () and "shallow" in (got.unavailable or "")
    plain = tmp_path / "plain"
    (plain / "submissions").mkdir(parents=True)
    none = read_history(plain / "gamut.toml", plain / "submissions")
    assert none.changes == () and "not in a git repository" in (none.unavailable or "")
    root = ET.fromstring(feed_xml(none, {}, title="LB", url=None, updated="2026-06-01T00:00:00Z"))
    assert root.findall(f"{A}entry") == []
    assert "not in a git repository" in (root.findtext(f"{A}subtitle") or "")
    assert root.findtext(f"{A}updated") == "2026-06-01T00:00:00Z"


def test_the_built_site_has_the_feed_and_links_it(held_site: tuple[GamutConfig, Path]) -> None:
    _cfg, site = held_site
    root = ET.fromstring((site / "feed.xml").read_bytes())
    assert root.tag == f"{A}feed" and root.findall(f"{A}entry") == []  # built outside git
    page = (site / "submissions" / "index.html").read_text()
    assert 'href="../feed.xml"' in page
    assert "This build lists none: the project is not in a git repository." in page
