"""The submitter's path of site_src/submit.md, end to end, against a fake model server.

``gamut submission new`` -> ``gamut questions export`` -> ``gamut generate`` (real HTTP to a fake
OpenAI-compatible server on 127.0.0.1) -> ``gamut submission validate`` fails on the TODOs ->
the person fills them in -> validation passes, also with ``--changed-from`` in a real git branch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from PIL import Image

from gamut.cli import main
from tests.fakes.llm_server import FakeLLMServer, prompt_text
from tests.submissions.helpers import FIXTURES, RESPONSES, Project

QUESTIONS = [json.loads(x) for x in (FIXTURES / "questions.jsonl").read_text().splitlines()]

FILLED = {
    "model_name": "Acme VL",
    "organisation": "Acme AI",
    "model_family": "acme",
    "link": "https://example.org/acme-vl",
    "open_weights": "true",
    "contact": '"@acme"',
}


def answer(body: dict[str, Any]) -> str:
    """A model that knows the fixture answers: it finds the question in the prompt."""
    prompt = prompt_text(body)
    for q in QUESTIONS:
        if q["question"] in prompt or q["text_only_question"] in prompt:
            return RESPONSES[q["question_id"]]
    return "I do not know."


def gamut(project: Project, *args: str) -> Result:
    return CliRunner().invoke(
        main,
        [*args, "--config", str(project.root / "gamut.toml")],
        env={"GAMUT_TEST_KEY": "sk-test-not-a-real-key"},
    )


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return done.stdout.decode()


@pytest.mark.slow
def test_from_new_to_a_validated_pull_request(project: Project, tmp_path: Path) -> None:
    for q in QUESTIONS:  # the local images of the fixture questions
        if not q["image"].startswith("https://"):
            path = project.root / q["image"]
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (16, 16), (len(q["question_id"]) * 9, 80, 160)).save(path)
    # a clone of the repository has its .gitignore, which keeps the local store (.gamut/) out
    shutil.copy(Path(__file__).resolve().parents[2] / ".gitignore", project.root / ".gitignore")
    for cmd in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.org"],
        ["config", "user.name", "t"],
        ["add", "."],
        ["commit", "-q", "-m", "base"],
        ["checkout", "-q", "-b", "my-model"],
    ):
        git(project.root, *cmd)

    assert gamut(project, "submission", "new", "acme-vl").exit_code == 0
    out = tmp_path / "questions.jsonl"
    assert (
        gamut(
            project, "questions", "export", "--setting", "multimodal", "--out", str(out)
        ).exit_code
        == 0
    )

    with FakeLLMServer(responder=answer) as srv:
        result = gamut(
            project,
            "generate",
            "--submission",
            "acme-vl",
            "--model",
            "acme-vl-2",
            "--base-url",
            srv.openai_base_url,
            "--api-key-env",
            "GAMUT_TEST_KEY",
        )
    assert result.exit_code == 0, result.output
    folder = project.subs / "acme-vl"
    assert sorted(p.name for p in folder.iterdir()) == [
        "multimodal.jsonl",
        "submission.yaml",
        "text_only.jsonl",
    ]

    result = gamut(project, "submission", "validate", "--changed-from", "main")
    assert result.exit_code == 1
    todo = sorted(
        x.split(": ")[1].split(" is still")[0]
        for x in result.output.splitlines()
        if " is still TODO" in x
    )
    assert todo == sorted(FILLED)
    assert "multimodal.jsonl" not in result.output  # the responses themselves are fine

    path = folder / "submission.yaml"
    lines = []
    for line in path.read_text().splitlines():
        key = line.split(":")[0].strip()
        if key in FILLED and "TODO" in line:
            line = f"{line.split(':')[0]}: {FILLED[key]}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")

    git(project.root, "add", "submissions/acme-vl")
    git(project.root, "commit", "-q", "-m", "Add acme-vl")
    result = gamut(project, "submission", "validate", "--changed-from", "main")
    assert result.exit_code == 0, result.output
    assert "valid: acme-vl; 0 error(s), 0 warning(s)" in result.output
