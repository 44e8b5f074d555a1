"""Each workflow's gamut steps, run in an environment installed exactly as the workflow does.

The environment comes from the job's own install step (``make install-locked`` or ``make
.venv/.installed``, see ``installs.py``), not from the development install the other tests run
in, so a module imported at run time that the workflow does not install fails here with the
traceback a pull request would meet. Every step of a job whose ``run`` calls ``.venv/bin/gamut``
runs as the runner runs it (``bash --noprofile --norc -eo pipefail``), in a git checkout of a
repository that holds the demo benchmark (its ``gamut.toml`` is the demo's, so ``$GAMUT_CONFIG``
keeps the workflows' value) and a pull request adding one demo submission, with the step's
``env`` evaluated: secrets and variables get fake values, step outputs come from the steps before,
artifacts pass from upload to download. GitHub's API and the Hub are the fakes on 127.0.0.1; only
``gh`` is a stand-in printing the open pull request. Steps without gamut (install, checkout,
comments posted with ``gh``) are the runner's business, not run here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.github_api import FakeGitHub, serve_github
from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub
from tests.workflows.installs import install_target, installed

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
DEMO = ROOT / "demo"
#: The demo submission the pull request adds; the base holds the others.
NEW = "pebblewick-mini"
PR = 7
DATASET = "gamut/results"
HF_TOKEN = "hf_fake_token_for_the_workflow_runs"
LEDGER_KEY = "fake-ledger-key-for-the-workflow-runs-0123456789abcdef"
#: The jobs, in the order a pull request meets them: (workflow, job, which commit is checked out).
JOBS = [
    ("validate-submission.yml", "validate", "head"),
    ("score-submission.yml", "score", "base"),
    ("collect-batches.yml", "collect", "base"),
    ("publish.yml", "build", "base"),
]


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                         text=True)  # fmt: skip
    return out.stdout.strip()


@dataclass
class World:
    """The upstream repository, its two commits, the fakes and what the jobs hand on."""

    root: Path
    up: Path
    base: str
    head: str
    github: FakeGitHub
    hub: FakeHub
    bin_dir: Path
    artifacts: dict[str, Path] = field(default_factory=dict)


def _repo(up: Path) -> tuple[str, str]:
    up.mkdir()
    text = (DEMO / "gamut.toml").read_text(encoding="utf-8").replace('= "../', '= "')
    (up / "gamut.toml").write_text(text, encoding="utf-8")
    shutil.copy(DEMO / "questions.jsonl", up / "questions.jsonl")
    for folder in ("rubrics", "verdicts", "images"):
        shutil.copytree(DEMO / folder, up / folder)
    (up / "audit").mkdir()
    for labels in sorted((DEMO / "audit").glob("*.jsonl")):  # the maintainers' labels of the base
        kept = [
            line
            for line in labels.read_text(encoding="utf-8").splitlines(keepends=True)
            if json.loads(line)["submission_id"] != NEW
        ]
        (up / "audit" / labels.name).write_text("".join(kept), encoding="utf-8")
    for sub in sorted((DEMO / "submissions").iterdir()):
        if sub.name != NEW:
            shutil.copytree(sub, up / "submissions" / sub.name)
    (up / ".gitignore").write_text(".gamut/\nresults/\nsite/\n.venv\n", encoding="utf-8")
    _git(up, "init", "-q", "-b", "main")
    _git(up, "config", "user.email", "t@example.org")
    _git(up, "config", "user.name", "t")
    _git(up, "add", "-A")
    _git(up, "commit", "-q", "-m", "base")
    base = _git(up, "rev-parse", "HEAD")
    _git(up, "checkout", "-q", "-b", "add-model")
    shutil.copytree(DEMO / "submissions" / NEW, up / "submissions" / NEW)
    _git(up, "add", "-A")
    _git(up, "commit", "-q", "-m", f"Add {NEW}")
    head = _git(up, "rev-parse", "HEAD")
    _git(up, "update-ref", f"refs/pull/{PR}/head", head)
    _git(up, "checkout", "-q", "main")
    return base, head


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("workflow-runs")
    up = root / "up"
    base, head = _repo(up)
    github = FakeGitHub()
    github.pulls = {PR: (head, [f"submissions/{NEW}/{f.name}" for f in
                                sorted((DEMO / "submissions" / NEW).iterdir())])}  # fmt: skip
    github.add_run(1000 + PR, head, approved_for=["submission-scoring"])
    first = {"README.md": b"results\n"}
    sha = commit_sha(first)
    hub = FakeHub(repos={DATASET: FakeRepo({sha: first}, branches={"main": sha}, private=False)},
                  token=HF_TOKEN)  # fmt: skip
    bin_dir = root / "bin"
    bin_dir.mkdir()
    # gh lists the open pull requests (what its --jq prints); nothing else here calls it.
    (bin_dir / "gh").write_text(f'#!/bin/sh\necho "{PR} {head}"\n')
    (bin_dir / "gh").chmod(0o755)
    with serve_github(github), serve_hub(hub):
        yield World(root, up, base, head, github, hub, bin_dir)


def _expression(expr: str, w: World, outputs: dict[str, dict[str, str]], temp: Path) -> str:
    """The value of one ``${{ ... }}`` in a step's env or a ``with: path``."""
    expr = expr.strip()
    if m := re.fullmatch(r"secrets\.(\w+)", expr):
        return {"HF_TOKEN": HF_TOKEN, "GAMUT_LEDGER_KEY": LEDGER_KEY}.get(m[1], f"fake-{m[1]}")
    if m := re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+)", expr):
        return outputs.get(m[1], {}).get(m[2], "")
    fixed = {
        "vars.GAMUT_HF_ENDPOINT": w.hub.url,
        "vars.GAMUT_HF_DATASET": DATASET,
        "github.token": w.github.token,
        "github.event.pull_request.base.sha": w.base,
        "github.event.pull_request.head.sha": w.head,
        "github.event.pull_request.number": str(PR),
        "github.event.workflow_run.head_sha": w.head,
        "runner.temp": str(temp),
    }
    assert expr in fixed, f"no value for ${{{{ {expr} }}}}: add one to the test"
    return fixed[expr]


def _evaluate(text: str, w: World, outputs: dict[str, dict[str, str]], temp: Path) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _expression(m[1], w, outputs, temp), str(text))


def _outputs(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _run_job(w: World, name: str, job: str, checkout: str) -> list[str]:
    """Run the job's gamut steps; the names of the steps run."""
    wf: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    steps: list[dict[str, Any]] = wf["jobs"][job]["steps"]
    (install,) = [s for s in steps if str(s.get("run", "")).startswith("make ")]
    venv = installed(install_target(install["run"]))
    work = w.root / f"{name}-{job}"
    temp = w.root / f"runner-{name}-{job}"
    temp.mkdir()
    _git(w.root, "clone", "-q", "--branch", "main" if checkout == "base" else "add-model",
         str(w.up), str(work))  # fmt: skip
    base_env = {
        **{k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "GH_", "GAMUT_", "HF_", "VIRTUAL_ENV", "PYTHON"))},
        "PATH": f"{w.bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HF_HOME": str(w.root / f"hf-home-{job}"),
        "HF_HUB_DISABLE_XET": "1",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "RUNNER_TEMP": str(temp),
        "GITHUB_REPOSITORY": w.github.repo,
        "GITHUB_API_URL": w.github.url,
        "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
        **{k: str(v) for k, v in (wf.get("env") or {}).items()},
    }  # fmt: skip
    outputs: dict[str, dict[str, str]] = {}
    ran: list[str] = []
    for i, step in enumerate(steps):
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/upload-artifact"):
            path = Path(_evaluate(step["with"]["path"], w, outputs, temp))
            if path.exists():
                w.artifacts[step["with"]["name"]] = path
            continue
        if uses.startswith("actions/download-artifact"):
            got = w.artifacts.get(step["with"]["name"])
            if got is not None:
                shutil.copytree(got, _evaluate(step["with"]["path"], w, outputs, temp))
            continue
        script = str(step.get("run", ""))
        if ".venv/bin/gamut " not in script:
            continue
        out_file = temp / f"output-{i}"
        env = {
            **base_env,
            **{k: _evaluate(v, w, outputs, temp) for k, v in (step.get("env") or {}).items()},
            "GITHUB_OUTPUT": str(out_file),
        }
        script = script.replace(".venv/bin/gamut ", f"{venv}/bin/gamut ")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=work, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        said = proc.stdout + proc.stderr
        label = f"{name} / {job} / {step.get('name', script.splitlines()[0])}"
        assert proc.returncode == 0, f"{label}: exit {proc.returncode}\n{said}"
        assert "Traceback" not in said, f"{label}: a traceback\n{said}"
        if "id" in step:
            outputs[str(step["id"])] = _outputs(out_file)
        ran.append(str(step.get("name", "")))
    return ran


def test_every_job_with_gamut_steps_is_played_here() -> None:
    jobs = set()
    for path in WORKFLOWS.glob("*.yml"):
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job, spec in wf["jobs"].items():
            if any(".venv/bin/gamut " in str(s.get("run", "")) for s in spec.get("steps", [])):
                jobs.add((path.name, job))
    assert jobs == {(n, j) for n, j, _ in JOBS}


def test_each_workflow_runs_its_gamut_steps_as_it_installs_them(world: World) -> None:
    ran = {}
    for name, job, checkout in JOBS:
        ran[(name, job)] = _run_job(world, name, job, checkout)
    assert all(ran.values()), ran
    # the hand-offs happened: the validation's artifact was scored, the PR's submission taken
    assert "submission" in world.artifacts
    score = world.root / "score-submission.yml-score"
    assert (score / "results" / "provenance.json").is_file()
    assert (world.root / "publish.yml-build" / "site" / "index.html").is_file()
    assert any(c.path.startswith(f"/api/datasets/{DATASET}/commit") for c in world.hub.requests)


@pytest.mark.parametrize("target", ["install-locked", ".venv/.installed"])
def test_the_workflow_installs_hold_no_development_tools(target: str) -> None:
    venv = installed(target)
    probe = "import importlib.util as u; print([m for m in ('pytest', 'mypy') if u.find_spec(m)])"
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True,
                          text=True, timeout=60, cwd=venv)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
