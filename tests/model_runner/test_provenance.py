"""``submission.yaml`` records how the answers were produced, keeping what people wrote."""

from __future__ import annotations

import datetime as dt
import os
import stat
from typing import Any

import pytest
import yaml

from gamut import pipeline
from gamut.model_runner.plan import GenerateOptions
from gamut.model_runner.provenance import MARK
from gamut.model_runner.runner import generate
from gamut.project import Project as GamutProject
from scoring.errors import ProblemsError
from scoring.questions import Setting
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
    assert generate(project.deployment, opts, environ=env, today=DAY).ok


def _meta(project: Project) -> tuple[str, dict[str, Any]]:
    text = (project.folder("test-model") / "submission.yaml").read_text(encoding="utf-8")
    return text, yaml.safe_load(text)


def test_a_model_name_given_by_a_person_is_written(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    _run(project, server, env, model_name="Fake Model One")
    _, meta = _meta(project)
    assert meta["model_name"] == "Fake Model One"
    _run(project, server, env, model_name="Another Name")
    assert _meta(project)[1]["model_name"] == "Fake Model One", "never overwritten"


def test_a_new_submission_is_scaffolded_with_production_filled(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    _run(project, server, env, temperature=0.2, max_tokens=999)
    text, meta = _meta(project)
    assert text.startswith("# submission.yaml")  # the scaffold's comments are kept
    assert "# true if the model could call tools" in text
    assert meta["model_name"] == "TODO", "the API id is left for a person to replace"
    assert meta["date"] == DAY
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
    human = ("model_name", "organisation", "model_family", "link", "open_weights", "contact")
    assert flagged == sorted(f"{k} is still TODO" for k in human)


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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model_name: [unclosed\n", r":2: not valid YAML: expected ',' or ']'"),
        ("model_name: A\nlink: x\nmodel_name: B\n", r":3: .*model_name is given twice"),
        ("production:\n  tools: false\n  tools: true\n", r":3: .*tools is given twice"),
        ("model_name: A\n<<: {model_name: B}\n", r":2: .*merge keys \(<<\) are not allowed"),
        ("model_name: A\n'model_name': B\n", "given twice"),  # quoting makes no new key
        ("model_name: A\n" + "x" * 70_000 + "\n", "over 64 KB"),
    ],
)  # fmt: skip
def test_a_file_people_broke_is_reported_before_any_call(
    project: Project, server: FakeLLMServer, env: dict[str, str], text: str, message: str
) -> None:
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    opts = GenerateOptions(
        submission_id="test-model",
        model="m",
        base_url=server.openai_base_url,
        api_key_env="GAMUT_TEST_KEY",
    )
    with pytest.raises(ProblemsError, match=message):
        generate(project.deployment, opts, environ=env)
    assert server.requests == []
    assert (folder / "submission.yaml").read_text(encoding="utf-8") == text  # nothing rewritten


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_files_written_keep_the_users_umask(
    project: Project, server: FakeLLMServer, env: dict[str, str], umask: int, mode: int
) -> None:
    old = os.umask(umask)
    try:
        _run(project, server, env, settings=(Setting.TEXT_ONLY,))
    finally:
        os.umask(old)
    folder = project.folder("test-model")
    for name in ("submission.yaml", "text_only.jsonl"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == mode, name
    (folder / "submission.yaml").chmod(0o600)
    _run(project, server, env, settings=(Setting.TEXT_ONLY,), limit=1)
    assert stat.S_IMODE((folder / "submission.yaml").stat().st_mode) == 0o600, "mode kept"
