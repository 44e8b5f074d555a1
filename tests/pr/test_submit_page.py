"""The Submit page, played through from a fresh fork with the live config, then the workflows.

Every command in the page's ``bash`` blocks (the documented alternative examples aside) is run in
order, as written, in a clone of a fork of an upstream repository whose ``gamut.toml`` is the
repository's own live config with only its placeholder dataset ids (and the judges' endpoints)
pointed at fakes on 127.0.0.1: a fake Hub holding the public question set and the held rubrics,
a fake model API, a fake judge API. Then the workflows' commands (``pr annotate``, ``pack``,
``unpack``, ``take``, ``judge``, ``score``, ``comment``) run as the workflows run them, and the
comment holds a rank.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoring.compiler import compile_rubric
from scoring.rubric import MetaRubric
from tests.fakes.llm_server import FakeLLMServer, prompt_text
from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub
from tests.model_runner.project import write_image

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "site_src" / "submit.md"
BIN = Path(sys.executable).parent
SID = "acme-vl-2-2026-11"
TOKEN = "hf_maintainers_token"
RATIONALE = "Judged by the fake judge."
N = 6

#: The page's commands, in order. The test fails when the page and this list disagree.
STEPS = [
    "git clone https://github.com/YOUR-NAME/REPOSITORY.git",
    "cd REPOSITORY",
    "make .venv/.installed",
    "source .venv/bin/activate",
    "git checkout -b add-my-model",
    f"gamut submission new {SID}",
    "gamut schema .gamut/schemas/",
    "gamut questions pull",
    "gamut questions export --setting multimodal --out .gamut/questions-multimodal.jsonl",
    "gamut questions export --setting text_only --out .gamut/questions-text-only.jsonl",
    "export OPENAI_API_KEY=...",
    f"gamut generate --submission {SID} --model acme-vl-2 --limit 5",
    f"gamut generate --submission {SID} --model acme-vl-2",
    f"gamut submission validate submissions/{SID}",
    f"gamut submission check {SID}",
    f"git add submissions/{SID}",
    f'git commit -m "Add {SID}"',
    "git fetch origin main",
    "gamut submission validate --changed-from origin/main",
    "git push -u origin add-my-model",
]
#: Alternatives the page shows as examples (other providers), not steps of the path.
EXAMPLES = [
    "export ANTHROPIC_API_KEY=...",
    "gamut generate --submission my-claude --provider anthropic --model MODEL-NAME",
    "export LOCAL_KEY=unused",
    "gamut generate --submission my-local-vlm --model my-vlm "
    "--base-url http://localhost:8000/v1 --api-key-env LOCAL_KEY",
]
#: What a person writes into submission.yaml in step 3.
HUMAN = {
    "model_name": '"Acme-VL 2"',
    "organisation": "Acme AI",
    "model_family": "acme",
    "link": "https://acme.example/vl-2",
    "open_weights": "false",
    "parameters": '"7B"',
    "contact": '"@acme-research"',
}

DISHES = ["pad thai", "tom yum", "green curry", "mango sticky rice", "som tam", "khao soi"]


def page_commands() -> list[str]:
    """Every command line of the page's ``bash`` blocks (comments dropped, continuations joined)."""
    text = PAGE.read_text(encoding="utf-8")
    out: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                out.append(" ".join(line.split()))
    return out


def _questions() -> list[dict[str, Any]]:
    return [
        {
            "question_id": f"food-{i + 1:04d}",
            "image_id": f"img-{i + 1}",
            "image": f"images/food-{i + 1:04d}.jpg",
            "domain": "food" if i % 2 == 0 else "desserts",
            "popularity": "head",
            "egocentric": i % 3 == 0,
            "question": "What is this dish, and how is it made?",
            "text_only_question": f"What is {dish}, and how is it made?",
        }
        for i, dish in enumerate(DISHES)
    ]


def _rubrics() -> list[dict[str, Any]]:
    return [
        {
            "question_id": q["question_id"],
            "snippets": [{"id": "S1", "url": "https://example.org/x", "title": "T",
                          "text": f"Held snippet about {dish} number {i}."}],
            "items": [
                {"id": "I1", "type": "fact", "tier": "answer_critical",
                 "text": f"Identifies the dish as {dish} (held {i}).", "cites": ["S1"]},
                {"id": "I2", "type": "strict_list", "tier": "valuable",
                 "topic": "ingredients", "members": [f"held ingredient {i}a",
                                                     f"held ingredient {i}b"]},
            ],
        }
        for i, (q, dish) in enumerate(zip(_questions(), DISHES, strict=True))
    ]  # fmt: skip


def _held_strings() -> list[str]:
    out: list[str] = []
    for raw in _rubrics():
        out += [c.text for c in compile_rubric(MetaRubric.model_validate(raw))]
        out += [s["text"] for s in raw["snippets"]]
        for item in raw["items"]:
            out += [item.get("text", ""), *item.get("members", [])]
    return [s for s in out if len(s) > 6]


def _judge(body: dict[str, Any]) -> str:
    verdicts = ["meets", "meets", "partially_meets", "missing", "contradicts"]
    h = int(hashlib.sha256(prompt_text(body).encode()).hexdigest(), 16)
    return json.dumps({"verdict": verdicts[h % len(verdicts)], "rationale": RATIONALE})


def _model(body: dict[str, Any]) -> str:
    text = prompt_text(body)
    return f"This is a Thai dish. {text[-40:]} It is made by stir-frying."


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          timeout=60)  # fmt: skip
    return done.stdout.strip()


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the live config no longer holds {old!r}"
    return text.replace(old, new)


def _live_config(qsha: str, rsha: str, judge: FakeLLMServer) -> str:
    """The repository's own gamut.toml, with the placeholders published and fake endpoints."""
    text = (ROOT / "gamut.toml").read_text(encoding="utf-8")
    text = _replace_once(text, "hf://datasets/UNPUBLISHED/gamut-questions@UNPUBLISHED",
                         f"hf://datasets/gamut/questions@{qsha}")  # fmt: skip
    text = _replace_once(text, "hf://datasets/UNPUBLISHED/gamut-rubrics@UNPUBLISHED",
                         f"hf://datasets/gamut/held-rubrics@{rsha}")  # fmt: skip
    text = _replace_once(text, 'base_url = "https://generativelanguage.googleapis.com/v1beta/openai/"',
                         f'base_url = "{judge.openai_base_url}"')  # fmt: skip
    text = _replace_once(text, 'base_url = "https://qwen-judge.gamut-leaderboard.org/v1"',
                         f'base_url = "{judge.openai_base_url}"')  # fmt: skip
    claude = 'model = "claude-opus-4-8"\n'
    text = _replace_once(text, claude, f'{claude}base_url = "{judge.anthropic_base_url}"\n')
    text = _replace_once(text, "bootstrap_resamples = 1000", "bootstrap_resamples = 200")
    # the live judges use the providers' batch APIs (tests/judge/test_batch*.py cover that path);
    # this play-through talks to a direct-mode fake
    text = text.replace('mode = "batch"', 'mode = "direct"')
    # a fork keeps its ledger local: no private ledger dataset to sync with
    text = _replace_once(text, 'ledger_hub = "UNPUBLISHED/gamut-ledger"', "")
    assert not re.search(r'^[a-z_]+ = "[^"]*UNPUBLISHED', text, re.M)
    return text


def _meta(name: str) -> str:
    return (
        f"model_name: {name}\norganisation: Base Lab\nmodel_family: base\n"
        "link: https://example.org/base\nopen_weights: true\nparameters: 7B\n"
        "date: 2026-11-01\ncontact: '@base'\nproduction:\n  decoding: temperature 0\n"
        "  tools: false\n  web_access: false\n"
    )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    image_files: dict[str, bytes] = {}
    for i, q in enumerate(_questions()):
        path = tmp_path / "img" / f"{q['question_id']}.jpg"
        write_image(path, "JPEG", i + 1)
        image_files[q["image"]] = path.read_bytes()
    qfiles = {
        "questions.jsonl": "".join(json.dumps(q) + "\n" for q in _questions()).encode(),
        **image_files,
    }
    rfiles = {f"rubrics/{r['question_id']}.json": json.dumps(r).encode() for r in _rubrics()}
    qsha, rsha = commit_sha(qfiles), commit_sha(rfiles)
    hub = FakeHub(
        repos={
            "gamut/questions": FakeRepo({qsha: qfiles}, private=False),
            "gamut/held-rubrics": FakeRepo({rsha: rfiles}),
        },
        token=TOKEN,
    )
    with (
        serve_hub(hub),
        FakeLLMServer(responder=_judge) as judge,
        FakeLLMServer(responder=_model) as model,
    ):
        up = tmp_path / "upstream"
        (up / "submissions" / "base-model").mkdir(parents=True)
        (up / "gamut.toml").write_text(_live_config(qsha, rsha, judge), encoding="utf-8")
        shutil.copy(ROOT / ".gitignore", up / ".gitignore")
        shutil.copy(ROOT / "submissions" / "README.md", up / "submissions" / "README.md")
        base = up / "submissions" / "base-model"
        (base / "submission.yaml").write_text(_meta("Base Model"))
        (base / "multimodal.jsonl").write_text("".join(
            json.dumps({"question_id": q["question_id"], "response": f"Probably {d}."}) + "\n"
            for q, d in zip(_questions(), DISHES, strict=True)))  # fmt: skip
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HF_", "GAMUT_", "OPENAI", "ANTHROPIC", "GEMINI", "QWEN",
                                    "GITHUB_", "VIRTUAL_ENV"))}  # fmt: skip
        env.update({
            "HOME": str(tmp_path / "home"),
            "PATH": "/usr/bin:/bin",
            "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org",
            "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org",
            "GAMUT_HF_ENDPOINT": hub.url,
            "HF_HUB_DISABLE_XET": "1",
            "HF_HOME": str(tmp_path / "hf-home"),
            "OPENAI_BASE_URL": model.openai_base_url,  # where "your model" is served
        })  # fmt: skip
        (tmp_path / "home").mkdir()
        _git(up, "init", "-q", "-b", "main")
        _git(up, "add", ".")
        subprocess.run(["git", "commit", "-q", "-m", "The leaderboard"], cwd=up, env=env,
                       check=True)  # fmt: skip
        secrets = {
            **env,
            "GAMUT_CONFIG": "gamut.toml",
            "HF_TOKEN": TOKEN,
            "GEMINI_API_KEY": "gm-test",
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "QWEN_JUDGE_API_KEY": "qw-test",
            "GAMUT_LEDGER_KEY": "submit-page-ledger-secret-0123456789abcdef",
            "CI": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        }
        secrets.pop("OPENAI_BASE_URL")
        # publish.yml on main: the base model is judged and scored.
        for args in (["questions", "pull"], ["judge"], ["score"]):
            _run(up, secrets, [str(BIN / "gamut"), *args, "--config", "gamut.toml"])
        fork = tmp_path / "fork.git"
        _git(tmp_path, "clone", "-q", "--bare", str(up), str(fork))
        yield {"tmp": tmp_path, "up": up, "fork": fork, "env": env, "secrets": secrets,
               "hub": hub, "judge": judge, "model": model}  # fmt: skip


def _run(cwd: Path, env: dict[str, str], argv: list[str], rc: int = 0) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == rc, f"{' '.join(argv)} exited {done.returncode}:\n{out}"
    return out


def _fill_in(meta: Path) -> None:
    """Step 3: a person replaces the TODO values they know."""
    lines = []
    for line in meta.read_text().splitlines():
        key = line.split(":")[0]
        if key in HUMAN and "TODO" in line:
            line = f"{key}: {HUMAN[key]}"
        lines.append(line)
    meta.write_text("\n".join(lines) + "\n")


def test_the_page_lists_exactly_the_steps_played_here() -> None:
    assert [c for c in page_commands() if c not in EXAMPLES] == STEPS
    assert all(e in page_commands() for e in EXAMPLES)


def test_the_submit_page_played_through_then_the_workflows(world: dict[str, Any]) -> None:
    tmp: Path = world["tmp"]
    env: dict[str, str] = dict(world["env"])
    model: FakeLLMServer = world["model"]
    outputs: dict[str, str] = {}
    cwd = tmp
    for step in STEPS:
        argv = shlex.split(step)
        if argv[:2] == ["git", "clone"]:  # the fork on GitHub is a local bare repository here
            _run(cwd, env, ["git", "clone", "-q", str(world["fork"]), str(cwd / "REPOSITORY")])
        elif argv[0] == "cd":
            cwd = cwd / argv[1]
        elif argv[0] == "make":  # this test already runs inside the installed environment
            makefile = (ROOT / "Makefile").read_text()
            assert "STAMP := $(VENV)/.installed" in makefile and "$(STAMP):" in makefile
        elif argv[0] == "source":  # what activate does: the venv's bin first on PATH
            env["PATH"] = f"{BIN}:{env['PATH']}"
        elif argv[0] == "export":
            name = argv[1].split("=", 1)[0]
            env[name] = "sk-your-key"
        else:
            outputs[step] = _run(cwd, env, argv)
        if step.startswith("gamut submission new"):
            _fill_in(cwd / "submissions" / SID / "submission.yaml")
    repo = cwd

    # What the page promised along the way.
    assert f"created submissions/{SID}/submission.yaml" in outputs[STEPS[5]]
    assert (repo / ".gamut" / "schemas" / "submission.schema.json").is_file()
    assert "downloaded and verified" in outputs["gamut questions pull"]
    exported = (repo / ".gamut" / "questions-multimodal.jsonl").read_text().splitlines()
    assert len(exported) == N and json.loads(exported[0])["image"].endswith("food-0001.jpg")
    # The model got exactly what the page says: 1 user message, image part then text part,
    # the image as a base64 data URL with its media type, no system prompt, temperature 0,
    # max_tokens 2048; one request per question and setting (N x 2 in all).
    bodies = [r.body for r in model.requests]
    assert len(bodies) == N * 2
    mm = [b for b in bodies if isinstance(b["messages"][0]["content"], list)]
    assert len(mm) == N
    (msg,) = mm[0]["messages"]
    assert msg["role"] == "user" and [p["type"] for p in msg["content"]] == ["image_url", "text"]
    assert msg["content"][0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert msg["content"][1]["text"] == "What is this dish, and how is it made?"
    assert all(b["temperature"] == 0 and b["max_completion_tokens"] == 2048 for b in bodies)
    assert not any("max_tokens" in b for b in bodies)
    assert all(len(b["messages"]) == 1 for b in bodies), "no system prompt unless given"
    meta = yaml.safe_load((repo / "submissions" / SID / "submission.yaml").read_text())
    assert meta["model_name"] == "Acme-VL 2", "generate kept the person's model_name"
    assert f"valid: {SID}" in outputs[f"gamut submission validate submissions/{SID}"]
    check = " ".join(outputs[f"gamut submission check {SID}"].split())
    assert f"multimodal: {N} responses" in check and "text_only: 6 responses" in check
    assert "not sized" in check and "rubrics are held" in check
    assert f"valid: {SID}" in outputs["gamut submission validate --changed-from origin/main"]
    # Nothing the steps wrote outside the submission folder is seen by git.
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert _git(repo, "diff", "--name-only", "origin/main...HEAD").splitlines() == sorted(
        f"submissions/{SID}/{f}" for f in ("multimodal.jsonl", "submission.yaml", "text_only.jsonl")
    )

    # validate-submission.yml: a checkout of the pull request's head, no secrets.
    secrets: dict[str, str] = world["secrets"]
    gamut = str(BIN / "gamut")
    base_sha = _git(world["up"], "rev-parse", "main")
    pr = tmp / "pr-checkout"
    _git(tmp, "clone", "-q", "--branch", "add-my-model", str(world["fork"]), str(pr))
    head_sha = _git(pr, "rev-parse", "HEAD")
    unsafe = {k: v for k, v in secrets.items()
              if k not in {"HF_TOKEN", "GEMINI_API_KEY", "ANTHROPIC_API_KEY",
                           "QWEN_JUDGE_API_KEY"}}  # fmt: skip
    cfg = ["--config", "gamut.toml"]  # "$GAMUT_CONFIG", as the workflows write it
    runner = tmp / "runner"
    runner.mkdir()
    _run(pr, unsafe, [gamut, "questions", "pull", *cfg])  # public: no token needed
    report = runner / "validation.json"
    report.write_text(subprocess.run(
        [gamut, "submission", "validate", *cfg, "--changed-from", base_sha, "--format", "json"],
        cwd=pr, env=unsafe, capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert json.loads(report.read_text())["submissions"] == [SID]
    _run(pr, unsafe, [gamut, "pr", "annotate", str(report)])
    artifact = runner / "artifact"
    _run(pr, unsafe, [gamut, "pr", "pack", *cfg, str(report), "--pr", "7", "--head-sha",
                      head_sha, "--out", str(artifact)])  # fmt: skip

    # score-submission.yml: a checkout of the base only, the ledger (store of record) pulled.
    base = tmp / "base-checkout"
    _git(tmp, "clone", "-q", "--branch", "main", str(world["up"]), str(base))
    shutil.copytree(world["up"] / ".gamut" / "ledger", base / ".gamut" / "ledger")
    unpacked = subprocess.run(
        [gamut, "pr", "unpack", *cfg, str(artifact)],
        cwd=base,
        env=secrets,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out = dict(line.split("=", 1) for line in unpacked.splitlines())
    assert out["submission_id"] == SID and out["head_sha"] == head_sha
    _run(base, secrets, [gamut, "questions", "pull", *cfg])
    # The submission's files come from the pull request's head commit, fetched as data.
    _git(base, "fetch", "-q", str(world["fork"]), "+refs/heads/add-my-model:refs/gamut/pr-head")
    take = runner / "take.json"
    taken = subprocess.run(
        [gamut, "pr", "take", *cfg, "--pr", out["pr_number"], "--head-sha", head_sha,
         "--base", "HEAD", "--report", str(take)],
        cwd=base, env=secrets, capture_output=True, text=True, check=True).stdout  # fmt: skip
    took = dict(line.split("=", 1) for line in taken.splitlines())
    assert took["submission_id"] == SID
    rescored = runner / "rescored.json"
    rescored.write_text(subprocess.run(
        [gamut, "submission", "validate", *cfg, took["submission_path"], "--format", "json"],
        cwd=base, env=secrets, capture_output=True, text=True, check=True).stdout)  # fmt: skip
    judge: FakeLLMServer = world["judge"]
    before = len(judge.requests)
    _run(base, secrets, [gamut, "judge", *cfg, "--submission", SID])
    n_checks = sum(len(compile_rubric(MetaRubric.model_validate(r))) for r in _rubrics())
    # each judge's preflight request, then 3 judges x 2 settings x checks
    assert len(judge.requests) - before == 3 + 3 * 2 * n_checks
    assert {r.protocol for r in judge.requests} == {"openai", "anthropic"}
    _run(base, secrets, [gamut, "score", *cfg])
    comment = runner / "comment" / "comment.md"
    _run(base, secrets, [gamut, "comment", *cfg, "--submission", SID, "--warnings", str(take),
                         "--warnings", str(rescored), "--out", str(comment)])  # fmt: skip

    md = comment.read_text()
    assert md.startswith("<!-- gamut-score -->\n") and f"## GAMUT score: `{SID}`" in md
    assert re.search(r"\| multimodal \| \*\*-?\d+\.\d [^|]*\*\* \| [12] of 2", md), md
    assert "judged by the primary judge `gemini` (`gemini-3.1-pro`)" in md
    assert f"https://gamut-leaderboard.github.io/gamut/submissions/{SID}.html" in md
    assert "Why incomplete" not in md
    assert RATIONALE not in md
    for text in _held_strings():
        assert text not in md, f"held rubric text in the comment: {text!r}"
