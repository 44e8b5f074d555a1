"""A tiny judge project on disk (questions, rubrics, submissions, gamut.toml), for tests."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.fakes.llm_server import prompt_text

QUESTIONS = [
    {
        "question_id": "food-0001",
        "image_id": "img-1",
        "image": None,
        "domain": "food",
        "popularity": "head",
        "egocentric": False,
        "question": "What is this dish?",
        "text_only_question": "What is pad thai?",
    },
    {
        "question_id": "plants-0001",
        "image_id": "img-2",
        "image": None,
        "domain": "plants",
        "popularity": "tail",
        "egocentric": True,
        "question": "What plant is this?",
        "text_only_question": "What is a monstera?",
    },
]

RUBRICS = [
    {
        "question_id": "food-0001",
        "snippets": [],
        "items": [
            {
                "id": "I1",
                "type": "fact",
                "tier": "answer_critical",
                "text": "Identifies the dish as pad thai.",
            },
            {
                "id": "I2",
                "type": "strict_list",
                "tier": "answer_critical",
                "topic": "core ingredients",
                "members": ["rice noodles", "tamarind paste"],
            },
            {
                "id": "I3",
                "type": "flexible_list",
                "tier": "valuable",
                "topic": "proteins",
                "members": ["shrimp", "chicken", "tofu"],
                "baselines": [1],
            },
        ],
    },
    {
        "question_id": "plants-0001",
        "snippets": [],
        "items": [
            {
                "id": "I1",
                "type": "fact",
                "tier": "answer_critical",
                "text": "Identifies the plant as Monstera deliciosa.",
            },
            {
                "id": "I2",
                "type": "relationship",
                "tier": "context",
                "entity": "philodendron",
                "relation": "a related aroid",
                "aspects": ["has similar split leaves"],
            },
        ],
    },
]

#: Checks per question: food 1 + 2 + (1 baseline + 3 members) = 7; plants 1 + 1 + 1 = 3.
CHECKS = {"food-0001": 7, "plants-0001": 3}

RESPONSES: dict[str, dict[str, dict[str, str]]] = {
    "alpha": {
        "multimodal": {
            "food-0001": "Pad thai, with rice noodles and shrimp.",
            "plants-0001": "A Monstera deliciosa.",
        },
        "text_only": {
            "food-0001": "Pad thai is a Thai noodle dish with tamarind paste.",
            "plants-0001": "Monstera is an aroid, like philodendron.",
        },
    },
    "beta": {
        "multimodal": {"food-0001": "Some noodles.", "plants-0001": "   "},
    },
}

#: Valid submission metadata but the model's name (``gamut judge`` validates every submission).
META: dict[str, Any] = {
    "organisation": "Acme AI",
    "model_family": "acme",
    "link": "https://example.org/model",
    "open_weights": False,
    "parameters": None,
    "date": "2026-01-01",
    "contact": "someone@example.org",
    "production": {"decoding": "temperature 0", "tools": False, "web_access": False},
}


def write_meta(folder: Path, model_name: str) -> None:
    """A valid ``submission.yaml`` naming the model ``model_name``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump({"model_name": model_name, **META}, sort_keys=False, allow_unicode=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")


#: The environment variable of the ledger secret in test projects (set by the judge tests).
LEDGER_KEY_ENV = "GAMUT_TEST_LEDGER_KEY"
LEDGER_KEY = "test-ledger-secret-0123456789abcdef0123456789"

#: Judge calls the whole project needs: all checks minus the empty response's 3.
TOTAL_CHECKS = 30
TOTAL_CALLS = 27


def write_project(
    root: Path,
    judges_toml: str,
    *,
    public: bool = True,
    responses: dict[str, dict[str, dict[str, str]]] | None = None,
    rubrics: list[dict[str, Any]] | None = None,
) -> Path:
    """Write the project under ``root``; returns the config path.

    Each submission gets valid metadata, so only its responses decide whether it validates.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    rdir = root / "rubrics"
    rdir.mkdir(exist_ok=True)
    for r in rubrics or RUBRICS:
        (rdir / f"{r['question_id']}.json").write_text(json.dumps(r))
    for sid, settings in (responses or RESPONSES).items():
        d = root / "submissions" / sid
        write_meta(d, f"{sid.title()} VL")
        for setting, answers in settings.items():
            (d / f"{setting}.jsonl").write_text(
                "".join(
                    json.dumps({"question_id": q, "response": a}) + "\n" for q, a in answers.items()
                )
            )
    cfg = root / "gamut.toml"
    cfg.write_text(
        '[benchmark]\nquestions = "questions.jsonl"\nrubrics = "rubrics"\n'
        f'rubrics_public = {"true" if public else "false"}\nsubmissions = "submissions"\n\n'
        '[store]\ncache = ".gamut/verdicts.sqlite"\nresults = "results"\n'
        f'ledger_key_env = "{LEDGER_KEY_ENV}"\n\n' + judges_toml
    )
    return cfg


def openai_judge(
    base_url: str,
    name: str = "gpt",
    *,
    primary: bool = True,
    concurrency: int = 8,
    timeout: float = 5,
    retries: int = 2,
    provider: str = "openai",
    extra: str = "",
    preflight: bool = False,
) -> str:
    """A ``[judges.NAME]`` table for an OpenAI-compatible (or Anthropic) judge at ``base_url``;
    without the preflight request unless asked (tests count the requests a run makes)."""
    return (
        f'[judges.{name}]\nprovider = "{provider}"\nmodel = "judge-model"\n'
        f'base_url = "{base_url}"\napi_key_env = "GAMUT_TEST_KEY"\nfamily = "gpt"\n'
        f"max_concurrency = {concurrency}\nprimary = {'true' if primary else 'false'}\n"
        f"timeout_s = {timeout}\nmax_retries = {retries}\n"
        + ("" if preflight else "preflight = false\n")
        + extra
        + "\n"
    )


def split_prompt(body: dict[str, Any]) -> tuple[str, str]:
    """(text outside the answer fence, text inside it) of a judge request."""
    text = prompt_text(body)
    m = re.search(r"^(<<<ANSWER-[0-9a-f]{12}>>>)$", text, re.MULTILINE)
    assert m, "no fence line in the prompt"
    fence = m[1]
    start = m.end()
    end = text.index("\n" + fence, start)
    return text[: m.start()] + text[end + len(fence) + 1 :], text[start:end]


def check_of(body: dict[str, Any]) -> str:
    """The check text of a judge request (the line after 'CHECK (kind: ...):')."""
    text = prompt_text(body)
    m = re.search(r"CHECK \(kind: [a-z_]+\):\n(.*)\n", text)
    assert m, "no check in the prompt"
    return m[1]


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], what: str) -> None:
    """SIGKILL the child ``proc`` as soon as ``ready()`` holds; it must not end first, and
    ``what`` names the point it never reached within 120 s."""
    try:
        deadline = time.monotonic() + 120
        while not ready():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, what
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
