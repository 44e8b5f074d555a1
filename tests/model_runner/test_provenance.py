"""``submission.yaml`` records how the answers were produced, keeping what people wrote."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import yaml

from gamut import pipeline
from gamut.model_runner import GenerateOptions, generate
from gamut.model_runner.provenance import MARK
from gamut.project import Project as GamutProject
from scoring.errors import ProblemsError
from tests.fakes.llm_server import FakeLLMServer
from tests.model_runner.project import Project

DAY = dt.date(2026, 11, 29)


def _run(project: Project, srv: FakeLLMServer, env: dict[str, str], **kw: Any) -> None:
    opts = GenerateOptions(
        submission_id="test-model",
        model="fake-model-1",
        base_url=srv.openai_base_url,
        api_key_env="GAMUT_TEST_KEY",
        **kw,
    )
    assert generate(project.cfg, opts, environ=env, today=DAY).ok


def _meta(project: Project) -> tuple[str, dict[str, Any]]:
    text = (project.folder("test-model") / "submission.yaml").read_text(encoding="utf-8")
    return text, yaml.safe_load(text)


def test_a_new_submission_is_scaffolded_with_production_filled(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    _run(project, server, env, temperature=0.2, max_tokens=999)
    text, meta = _meta(project)
    assert text.startswith("# submission.yaml")  # the scaffold's comments are kept
    assert "# true if the model could call tools" in text
    assert meta["model_name"] == "fake-model-1" and meta["date"] == DAY
    prod = meta["production"]
    assert prod["decoding"] == "temperature 0.2, max 999 tokens"
    assert prod["tools"] is False and prod["web_access"] is False
    assert prod["system_prompt"] is None
    assert prod["notes"].startswith(f"{MARK}: provider openai, model fake-model-1")
    assert "2026-11-29" in prod["notes"]
    for key in ("organisation", "model_family", "link", "open_weights", "contact"):
        assert str(meta[key]).startswith("TODO"), key
    # The validator passes the responses and flags only the human-only fields.
    report = pipeline.validate(GamutProject(project.cfg), [project.folder("test-model")])
    flagged = sorted(p.message for p in report.errors)
    assert flagged == sorted(
        f"{k} is still TODO"
        for k in ("organisation", "model_family", "link", "open_weights", "contact")
    )


def test_human_fields_and_comments_survive_and_reruns_are_idempotent(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    human = (
        "# our own comment\n"
        "model_name: Fake Model One (Nov 2026)\n"
        "organisation: Example Lab\n"
        "model_family: fake\n"
        "link: https://example.org/fake\n"
        "open_weights: true\n"
        "parameters: 7B\n"
        "date: 2026-11-01\n"
        "contact: '@octocat'\n"
        "production:\n"
        "  decoding: whatever was typed\n"
        "  tools: true\n"
        "  web_access: true\n"
        "  notes: |\n"
        "    Served with vLLM 0.9 on one GPU.\n"
        "# trailing comment\n"
    )
    (folder / "submission.yaml").write_text(human, encoding="utf-8")
    _run(project, server, env, limit=2, system_prompt="Be complete.")
    text, meta = _meta(project)
    assert "# our own comment" in text and "# trailing comment" in text
    assert meta["model_name"] == "Fake Model One (Nov 2026)"
    assert meta["date"] == dt.date(2026, 11, 1)
    assert meta["organisation"] == "Example Lab" and meta["parameters"] == "7B"
    prod = meta["production"]
    assert prod["tools"] is False and prod["web_access"] is False
    assert prod["decoding"] == "temperature 0, max 2048 tokens"
    assert prod["system_prompt"].startswith("sha256:")
    assert prod["notes"].startswith("Served with vLLM 0.9 on one GPU.\n\n" + MARK)
    _run(
        project, server, env, system_prompt="Be complete."
    )  # the same run continued: one machine paragraph, not two
    text2, meta2 = _meta(project)
    assert meta2["production"]["notes"].count(MARK) == 1
    assert text2 == text
    report = pipeline.validate(GamutProject(project.cfg), [folder])
    assert report.ok, [str(p) for p in report.errors]


def test_a_file_people_broke_is_reported_before_any_call(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text("model_name: [unclosed\n", encoding="utf-8")
    opts = GenerateOptions(
        submission_id="test-model",
        model="m",
        base_url=server.openai_base_url,
        api_key_env="GAMUT_TEST_KEY",
    )
    with pytest.raises(ProblemsError, match="not readable YAML"):
        generate(project.cfg, opts, environ=env)
    assert server.requests == []
