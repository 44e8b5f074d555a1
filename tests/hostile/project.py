"""A small judge project whose submissions also carry valid metadata, for pipeline tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.judge.project import openai_judge, write_meta, write_project

GOOD = {
    "multimodal": {
        "food-0001": "Pad thai, with rice noodles and shrimp.",
        "plants-0001": "A Monstera deliciosa.",
    }
}


def add_submission(
    root: Path, sid: str, model_name: str, responses: dict[str, str] | None = None
) -> Path:
    """Add a valid submission ``sid`` (or one with the given multimodal responses)."""
    folder = root / "submissions" / sid
    write_meta(folder, model_name)
    lines = responses or GOOD["multimodal"]
    (folder / "multimodal.jsonl").write_text(
        "".join(json.dumps({"question_id": q, "response": r}) + "\n" for q, r in lines.items()),
        encoding="utf-8",
    )
    return folder


def pipeline_project(root: Path, base_url: str, *, public: bool = True) -> Path:
    """Two valid submissions (alpha, beta) judged by an OpenAI-compatible judge; the config."""
    cfg = write_project(
        root,
        openai_judge(base_url),
        public=public,
        responses={"alpha": GOOD, "beta": {"multimodal": {**GOOD["multimodal"]}}},
    )
    write_meta(root / "submissions" / "alpha", "Alpha VL")
    write_meta(root / "submissions" / "beta", "Beta VL")
    (root / "submissions" / "beta" / "multimodal.jsonl").write_text(
        json.dumps({"question_id": "food-0001", "response": "Some noodles, likely pad thai."})
        + "\n"
        + json.dumps({"question_id": "plants-0001", "response": "A split-leaf philodendron."})
        + "\n"
    )
    return cfg
