"""The shipped demo questions and their images go through the multimodal path for real."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

from gamut.model_runner.plan import GenerateOptions
from gamut.model_runner.runner import generate
from gamut.project import Project
from scoring.questions import Setting, load_questions
from tests.fakes.llm_server import FakeLLMServer
from tests.model_runner.project import CONFIG

DEMO = Path(__file__).resolve().parents[2] / "demo"


def test_demo_images_reach_the_model_byte_for_byte(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    shutil.copy(DEMO / "questions.jsonl", tmp_path / "questions.jsonl")
    shutil.copytree(DEMO / "images", tmp_path / "images")
    (tmp_path / "gamut.toml").write_text(
        CONFIG,
        encoding="utf-8",
    )
    questions = load_questions(tmp_path / "questions.jsonl")
    opts = GenerateOptions(
        submission_id="demo-run",
        model="m",
        base_url=server.openai_base_url,
        api_key_env="GAMUT_TEST_KEY",
        settings=(Setting.MULTIMODAL,),
    )
    result = generate(Project.load(tmp_path / "gamut.toml"), opts, environ=env)
    assert result.ok and result.stats[Setting.MULTIMODAL].done == len(questions)
    by_text = {q.question: q for q in questions}
    for req in server.requests:
        image_part, text_part = req.body["messages"][-1]["content"]
        q = by_text[text_part["text"]]
        assert q.image is not None
        head, data = image_part["image_url"]["url"].split(",", 1)
        assert head == "data:image/png;base64"
        assert base64.b64decode(data) == (tmp_path / q.image).read_bytes()
