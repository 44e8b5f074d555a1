"""Shared fixtures of the Hub tests: a fake hub holding one private rubric dataset."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

TOKEN = "hf_test_token_not_a_secret"
#: The ledger dataset of :func:`ledger_hub`, and the ledger secret it sets.
LEDGER_REPO = "gamut/ledger"
LEDGER_SECRET = "ledger-secret-for-tests-" + "0" * 20

RUBRIC = {
    "question_id": "food-0001",
    "snippets": [
        {
            "id": "S1",
            "url": "https://example.org/pad-thai",
            "title": "Pad thai",
            "text": "Pad thai is a stir-fried rice noodle dish.",
        }
    ],
    "items": [
        {
            "id": "I1",
            "type": "fact",
            "tier": "answer_critical",
            "text": "Identifies the dish as pad thai.",
            "cites": ["S1"],
        },
        {
            "id": "I2",
            "type": "strict_list",
            "tier": "valuable",
            "topic": "core ingredients",
            "members": ["rice noodles", "tamarind paste"],
        },
    ],
}


def rubric_files() -> dict[str, bytes]:
    """The files of the held-rubric dataset: rubrics plus files that must not be fetched."""
    return {
        "rubrics/food-0001.json": json.dumps(RUBRIC).encode(),
        "rubrics/more/food-0002.jsonl": (
            json.dumps({**RUBRIC, "question_id": "food-0002"}) + "\n"
        ).encode(),
        "README.md": b"# held rubrics\n",
        "notes/drafts.txt": b"draft notes, never fetched\n",
        "images/food-0001.png": b"\x89PNG not really",
    }


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    """A running fake hub with the private dataset ``gamut/held-rubrics`` at one commit."""
    files = rubric_files()
    sha = commit_sha(files)
    repo = FakeRepo(commits={sha: files}, branches={"main": sha}, private=True)
    with serve_hub(FakeHub(repos={"gamut/held-rubrics": repo}, token=TOKEN)) as h:
        yield h


@pytest.fixture
def ledger_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A fake hub with an empty private dataset ``gamut/ledger``; the env points at it."""
    sha = commit_sha({})
    repo = FakeRepo(commits={sha: {}}, branches={"main": sha}, private=True)
    with serve_hub(FakeHub(repos={LEDGER_REPO: repo}, token=TOKEN)) as h:
        monkeypatch.setenv("GAMUT_HF_ENDPOINT", h.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("GAMUT_LEDGER_KEY", LEDGER_SECRET)
        yield h


@pytest.fixture
def held_sha() -> str:
    """The commit of the held rubrics in the fake hub."""
    return commit_sha(rubric_files())


def write_config(root: Path, rubrics: str, *, public: bool = False, extra: str = "") -> Path:
    """A minimal gamut.toml under ``root`` pointing at ``rubrics``."""
    root.mkdir(parents=True, exist_ok=True)
    cfg = root / "gamut.toml"
    cfg.write_text(
        f"""
[benchmark]
questions = "questions.jsonl"
rubrics = "{rubrics}"
rubrics_public = {str(public).lower()}

[judges.j1]
provider = "replay"
model = "m1"
family = "fam"
replay = "verdicts/j1.parquet"
primary = true
{extra}
""",
        encoding="utf-8",
    )
    return cfg
