"""Helpers of the submission tests: a small project on disk and clean submission files."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gamut.config import GamutConfig, load_config

FIXTURES = Path(__file__).parent / "fixtures"
QUESTION_IDS = [
    json.loads(line)["question_id"]
    for line in (FIXTURES / "questions.jsonl").read_text().splitlines()
]
RESPONSES: dict[str, str] = json.loads((FIXTURES / "responses.json").read_text())

CONFIG = """\
[benchmark]
questions = "questions.jsonl"
rubrics = "rubrics"
submissions = "submissions"

[judges.fake]
provider = "replay"
model = "fake"
replay = "verdicts.parquet"
family = "fake"
primary = true
"""

GOOD_META: dict[str, Any] = {
    "model_name": "Acme-VL 2",
    "organisation": "Acme AI",
    "model_family": "acme",
    "link": "https://example.org/acme-vl-2",
    "open_weights": True,
    "parameters": "7B",
    "date": "2026-11-01",
    "contact": "@acme",
    "production": {"decoding": "temperature 0", "tools": False, "web_access": False},
}


def jsonl(records: list[dict[str, Any]]) -> str:
    """JSON Lines text of ``records``."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def good_lines(texts: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One clean response line per fixture question."""
    texts = texts or RESPONSES
    return [{"question_id": q, "response": texts[q]} for q in QUESTION_IDS]


def reordered(texts: dict[str, str]) -> dict[str, str]:
    """Different but clean responses: each one's sentences in reverse order."""
    out = {q: " ".join(reversed(t.split(". "))) for q, t in texts.items()}
    return {q: t if t != texts[q] else t + " That is the short answer." for q, t in out.items()}


@dataclass
class Project:
    """A project folder with a config, the fixture questions and an empty submissions folder."""

    root: Path

    @classmethod
    def fresh(cls, folder: Path) -> Project:
        """A new project in ``folder/repo``."""
        root = folder / "repo"
        root.mkdir()
        shutil.copy(FIXTURES / "questions.jsonl", root / "questions.jsonl")
        (root / "gamut.toml").write_text(CONFIG, encoding="utf-8")
        (root / "submissions").mkdir()
        return cls(root)

    @property
    def cfg(self) -> GamutConfig:
        return load_config(self.root / "gamut.toml")

    @property
    def subs(self) -> Path:
        return self.root / "submissions"

    def write(
        self,
        sid: str,
        multimodal: str | list[dict[str, Any]] | None = None,
        text_only: str | list[dict[str, Any]] | None = None,
        meta: str | dict[str, Any] | None = None,
    ) -> Path:
        """Write a submission; defaults are clean files (no text_only file).

        The default metadata names the model after its id, so that submissions stay distinct.
        """
        folder = self.subs / sid
        folder.mkdir(parents=True, exist_ok=True)
        meta = {**GOOD_META, "model_name": f"Acme-VL {sid}"} if meta is None else meta
        text = meta if isinstance(meta, str) else yaml.safe_dump(meta, sort_keys=False)
        (folder / "submission.yaml").write_text(text, encoding="utf-8")
        mm = good_lines() if multimodal is None else multimodal
        (folder / "multimodal.jsonl").write_text(
            mm if isinstance(mm, str) else jsonl(mm), encoding="utf-8"
        )
        if text_only is not None:
            (folder / "text_only.jsonl").write_text(
                text_only if isinstance(text_only, str) else jsonl(text_only), encoding="utf-8"
            )
        return folder
