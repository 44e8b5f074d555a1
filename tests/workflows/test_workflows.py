"""The GitHub workflows: linted offline, least privilege, pinned, and no untrusted interpolation."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from gamut.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent
NAMES = [
    "ci.yml",
    "validate-submission.yml",
    "score-submission.yml",
    "publish.yml",
    "collect-batches.yml",
]


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return data


def _steps(wf: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(job, step) for job, spec in wf["jobs"].items() for step in spec.get("steps", [])]


def test_the_five_workflows_exist() -> None:
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == sorted(NAMES)


def test_zizmor_offline_is_clean() -> None:
    proc = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", str(WORKFLOWS)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout


def test_actionlint_is_clean() -> None:
    files = [str(WORKFLOWS / n) for n in NAMES]
    proc = subprocess.run([str(BIN / "actionlint"), *files], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_scoring_takes_the_submission_from_the_head_commit_never_a_checkout() -> None:
    wf = _load("score-submission.yml")
    steps = [s for _, s in _steps(wf)]
    checkouts = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout")]
    assert all("ref" not in (s.get("with") or {}) for s in checkouts)  # the base, never the PR
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert "refs/pull/$PR_NUMBER/head" in runs and "gamut pr take" in runs
    assert (
        "steps.unpack.outputs.submission_path"
        not in (WORKFLOWS / "score-submission.yml").read_text()
    )


def test_check_jsonschema_accepts_every_workflow() -> None:
    files = [str(WORKFLOWS / n) for n in NAMES]
    proc = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *files],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", NAMES)
def test_no_expression_is_interpolated_into_run(name: str) -> None:
    for job, step in _steps(_load(name)):
        run = step.get("run", "")
        assert "${{ github.event" not in run, (job, run)
        assert "${{" not in run, f"{name}:{job}: pass values through env:, not into run:"


@pytest.mark.parametrize("name", NAMES)
def test_actions_are_pinned_by_sha_with_a_version_comment(name: str) -> None:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    uses = re.findall(r"uses:\s*(\S+)(.*)", text)
    assert uses
    for ref, rest in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", ref), ref
        assert re.search(r"#\s*v\d+\.\d+\.\d+", rest), f"{ref} needs a '# vX.Y.Z' comment"


@pytest.mark.parametrize("name", NAMES)
def test_least_privilege_and_concurrency(name: str) -> None:
    wf = _load(name)
    assert "permissions" in wf, "set top-level permissions"
    assert set(wf["permissions"] or {}) <= {"contents"}
    assert "group" in wf["concurrency"]
    assert wf["defaults"]["run"]["shell"] == "bash", "bash -eo pipefail for every run: step"
    for job, spec in wf["jobs"].items():
        perms = spec.get("permissions", wf["permissions"]) or {}
        assert "write" not in perms.get("contents", "read"), job
    for _, step in _steps(wf):
        if "actions/setup-python" in step.get("uses", ""):
            assert step["with"]["python-version"] == "3.11"
        if "actions/checkout" in step.get("uses", ""):
            assert step["with"]["persist-credentials"] is False


def test_validation_is_read_only_without_secrets() -> None:
    text = (WORKFLOWS / "validate-submission.yml").read_text(encoding="utf-8")
    wf = _load("validate-submission.yml")
    assert list(wf[True]) == ["pull_request"]  # YAML reads the key `on` as True
    assert wf["permissions"] == {"contents": "read"}
    assert "${{ secrets." not in text
    assert all("permissions" not in job for job in wf["jobs"].values())
    runs = " ".join(step.get("run", "") for _, step in _steps(wf))
    assert "--changed-from" in runs and "gamut pr annotate" in runs and "gamut pr pack" in runs


def _assert_base_only_and_comment_without_secrets(wf: Any, comment: Any) -> None:
    """Every checkout is of the base (no ref, no repository), the comment job may only write
    pull-request comments and sees no secret nor checkout, and secrets stay in Environments."""
    for _, step in _steps(wf):
        if "actions/checkout" in step.get("uses", ""):
            assert "ref" not in step.get("with", {}) and "repository" not in step.get("with", {})
    assert comment["permissions"] == {"pull-requests": "write"}
    text = yaml.safe_dump(comment)
    assert "${{ secrets." not in text and "actions/checkout" not in text
    for job, spec in wf["jobs"].items():
        if "${{ secrets." in yaml.safe_dump(spec):
            assert spec.get("environment"), f"{job} uses secrets outside an Environment"


def test_scoring_checks_out_the_base_and_gates_secrets() -> None:
    wf = _load("score-submission.yml")
    trigger = wf[True]["workflow_run"]
    assert trigger == {"workflows": ["Validate submission"], "types": ["completed"]}
    assert wf["permissions"] == {}
    score, comment = wf["jobs"]["score"], wf["jobs"]["comment"]
    assert "conclusion == 'success'" in score["if"] and "event == 'pull_request'" in score["if"]
    assert score["environment"] == "submission-scoring"
    _assert_base_only_and_comment_without_secrets(wf, comment)
    runs = " ".join(step.get("run", "") for _, step in _steps(wf))
    assert "gh api" in runs and "RUN_HEAD_SHA" in runs and "gamut pr unpack" in runs
    assert "<!-- gamut-score -->" in runs


def test_collecting_batches_is_scheduled_gated_and_runs_no_pr_code() -> None:
    wf = _load("collect-batches.yml")
    assert set(wf[True]) == {"schedule", "workflow_dispatch"}
    assert wf[True]["schedule"][0]["cron"]
    assert wf["permissions"] == {}
    collect, comment = wf["jobs"]["collect"], wf["jobs"]["comment"]
    assert collect["environment"] == "batch-collection"
    assert "write" not in " ".join(str(v) for v in collect["permissions"].values())
    _assert_base_only_and_comment_without_secrets(wf, comment)
    runs = " ".join(step.get("run", "") for _, step in _steps(wf))
    assert "gamut pr take" in runs and "gamut pr unpack" not in runs  # head commits, as data
    assert "gamut judge" in runs and "gamut score" in runs
    assert (
        runs.index("gamut ledger pull")
        < runs.index("gamut judge")
        < runs.index("gamut ledger push")
    )
    assert "--judging" in runs and "<!-- gamut-score -->" in runs


def test_scoring_passes_the_judging_progress_to_the_comment() -> None:
    runs = " ".join(step.get("run", "") for _, step in _steps(_load("score-submission.yml")))
    assert "--status-out" in runs and "--judging" in runs and "75)" in runs


@pytest.mark.parametrize("name", ["score-submission.yml", "collect-batches.yml"])
def test_scoring_goes_on_when_only_invalid_merged_submissions_are_left_out(name: str) -> None:
    from scoring.tables.write import PROVENANCE_FILE

    runs = " ".join(step.get("run", "") for _, step in _steps(_load(name)))
    # `gamut score` exits 1 both on an error and after writing the tables without the
    # submissions that fail validation; the tables' last file tells the two apart
    assert '.venv/bin/gamut score --config "$GAMUT_CONFIG" || code=$?' in runs
    results = _live_config()["store"]["results"]
    assert f'[ "$code" -eq 1 ] && [ -f {results}/{PROVENANCE_FILE} ]' in runs
    assert 'elif [ "$code" -ne 0 ]; then' in runs


def test_collecting_batches_goes_on_when_the_dry_run_leaves_a_submission_out() -> None:
    runs = " ".join(step.get("run", "") for _, step in _steps(_load("collect-batches.yml")))
    assert '--status-out "$RUNNER_TEMP/before.json" > /dev/null || code=$?' in runs
    assert '[ ! -f "$RUNNER_TEMP/before.json" ]' in runs  # 1 without the status: an error


def test_publish_deploys_pages_and_the_dataset() -> None:
    wf = _load("publish.yml")
    assert wf[True]["push"] == {"branches": ["main"]}
    deploy = wf["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert wf["jobs"]["build"]["environment"] == "publish"
    runs = " ".join(step.get("run", "") for _, step in _steps(wf))
    assert "gamut run" in runs and "gamut publish hf" in runs
    # a merged submission that no longer validates is left out; the others are still deployed
    assert "--left-out-ok" in runs


def _gamut_calls() -> list[tuple[str, list[str]]]:
    calls = []
    for name in NAMES:
        for _, step in _steps(_load(name)):
            text = step.get("run", "").replace("\\\n", " ")
            for line in text.splitlines():
                if ".venv/bin/gamut " in line:
                    cmd = line.split(".venv/bin/gamut ", 1)[1].split("|")[0].split(">")[0]
                    calls.append((name, shlex.split(cmd)))
    return calls


@pytest.mark.parametrize(("name", "argv"), _gamut_calls())
def test_every_gamut_call_in_a_workflow_exists(name: str, argv: list[str]) -> None:
    cmd: click.Command = main
    words = list(argv)
    while isinstance(cmd, click.Group) and words and not words[0].startswith("-"):
        sub = cmd.get_command(click.Context(cmd), words.pop(0))
        assert sub is not None, f"{name}: unknown command in {argv}"
        cmd = sub
    known = {o for p in cmd.params for o in getattr(p, "opts", [])}
    for w in words:
        if w.startswith("--"):
            assert w.split("=")[0] in known, f"{name}: {argv}: unknown option {w}"


def _live_config() -> dict[str, Any]:
    import tomllib

    data: dict[str, Any] = tomllib.loads((ROOT / "gamut.toml").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", ["validate-submission.yml", "score-submission.yml", "publish.yml"])
def test_workflows_run_the_live_config_named_explicitly(name: str) -> None:
    wf = _load(name)
    assert wf["env"]["GAMUT_CONFIG"] == "gamut.toml", "no repository-variable fallback"
    assert "vars.GAMUT_CONFIG" not in (WORKFLOWS / name).read_text(encoding="utf-8")
    for _, step in _steps(wf):
        if "gamut " in step.get("run", "") and "pr annotate" not in step["run"]:
            assert '--config "$GAMUT_CONFIG"' in step["run"], step["run"]


def test_the_validation_trigger_matches_the_live_submissions_folder() -> None:
    paths = _load("validate-submission.yml")[True]["pull_request"]["paths"]
    assert paths == [f"{_live_config()['benchmark']['submissions']}/**"]


@pytest.mark.parametrize("name", ["score-submission.yml", "publish.yml"])
def test_judging_steps_get_every_live_judge_key(name: str) -> None:
    live = _live_config()
    keys = {j["api_key_env"] for j in live["judges"].values() if "api_key_env" in j}
    assert keys == {"GEMINI_API_KEY", "ANTHROPIC_API_KEY", "QWEN_JUDGE_API_KEY"}
    keys.add(live["store"]["ledger_key_env"])
    judging = [s for _, s in _steps(_load(name)) if "gamut judge" in s.get("run", "")
               or "gamut run" in s.get("run", "")]  # fmt: skip
    assert judging
    for step in judging:
        for key in keys:
            assert step["env"][key] == f"${{{{ secrets.{key} }}}}", (name, key)


@pytest.mark.parametrize("name", ["validate-submission.yml", "score-submission.yml", "publish.yml"])
def test_the_public_questions_are_pulled_before_any_command_reads_them(name: str) -> None:
    runs = [s.get("run", "") for _, s in _steps(_load(name)) if "gamut " in s.get("run", "")]
    assert "gamut questions pull" in runs[0], runs[0]


def _gamut_steps(wf: dict[str, Any], job: str) -> list[tuple[str, dict[str, Any]]]:
    """(the gamut command words, the step) of each step of ``job`` that runs gamut."""
    out = []
    for step in wf["jobs"][job]["steps"]:
        run = step.get("run", "")
        if ".venv/bin/gamut " in run:
            out.append((" ".join(run.split(".venv/bin/gamut ", 1)[1].split()[:2]), step))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_no_actions_cache_holds_verdicts_or_anything_of_the_rubrics(name: str) -> None:
    for job, step in _steps(_load(name)):
        uses = step.get("uses", "")
        if "actions/cache" in uses:
            path = str(step.get("with", {}).get("path", ""))
            assert not any(w in path for w in (".gamut", "verdict", "results", "ledger")), (
                f"{name}:{job}: the Actions cache is readable by pull-request runs; the ledger "
                "lives in its private dataset"
            )


@pytest.mark.parametrize(
    ("name", "job"), [("publish.yml", "build"), ("score-submission.yml", "score")]
)
def test_judging_jobs_pull_the_ledger_first_and_push_it_after(name: str, job: str) -> None:
    wf = _load(name)
    assert wf["jobs"][job].get("environment"), "the ledger's secrets live in an Environment"
    steps = _gamut_steps(wf, job)
    words = [w for w, _ in steps]
    judging = [i for i, w in enumerate(words) if w.startswith(("judge", "run"))]
    assert judging, words
    pulls = [i for i, w in enumerate(words) if w.startswith("ledger pull")]
    pushes = [i for i, w in enumerate(words) if w.startswith("ledger push")]
    assert pulls and pulls[0] < judging[0], words
    assert pushes and pushes[-1] > judging[-1], words
    push_step = steps[pushes[-1]][1]
    assert "!cancelled()" in push_step["if"], "push what was judged even when a step failed"
    for w, step in steps:
        if w.startswith(("judge", "run", "ledger")):
            env = step.get("env", {})
            assert env.get("GAMUT_LEDGER_KEY") == "${{ secrets.GAMUT_LEDGER_KEY }}", (job, w)
        if w.startswith("ledger"):
            assert step["env"].get("HF_TOKEN") == "${{ secrets.HF_TOKEN }}", (job, w)


@pytest.mark.parametrize("name", NAMES)
def test_secrets_are_used_only_in_environment_gated_jobs(name: str) -> None:
    for job, spec in _load(name)["jobs"].items():
        if "${{ secrets." in yaml.safe_dump(spec):
            assert spec.get("environment"), f"{name}:{job} uses secrets outside an Environment"


def test_the_collector_takes_only_heads_a_maintainer_approved_and_never_asks_first() -> None:
    wf = _load("collect-batches.yml")
    text = (WORKFLOWS / "collect-batches.yml").read_text(encoding="utf-8")
    steps = [s for _, s in _steps(wf)]
    take = next(s for s in steps if "gamut pr take" in s.get("run", ""))
    run = take["run"]
    # the approval is asked before anything of the pull request is fetched or taken
    assert run.index("gamut pr approved") < run.index("git fetch") < run.index("gamut pr take")
    assert "grep -qx 'approved=true'" in run and "continue" in run.split("approved=true", 1)[1]
    assert "validate-submission.yml/runs" not in text  # passing validation approves nothing
    # an id held by an earlier open pull request is refused before the take, in this run too
    assert run.index("gamut pr claimed") < run.index("git fetch")
    assert "sort -n" in run and "taken[$sid]" in run
    judging = [s["run"] for s in steps if ".venv/bin/gamut judge" in s.get("run", "")]
    calls = [c for r in judging for c in r.replace("\\\n", " ").split(".venv/bin/gamut judge")[1:]]
    assert calls
    for call in calls:  # every call either calls nothing or collects only
        first = call.split("||")[0]
        assert "--dry-run" in first or "--collect-only" in first, first
    assert "submission-scoring" in text and "--collect-only" in text.split("name:", 1)[0]


def test_scoring_refuses_an_id_an_earlier_pull_request_holds_before_judging() -> None:
    wf = _load("score-submission.yml")
    steps = wf["jobs"]["score"]["steps"]
    names = [s.get("id", "") or s.get("name", "") for s in steps]
    claim = names.index("claim")
    assert names.index("take") < claim < names.index("judge")
    assert "gamut pr claimed" in steps[claim]["run"] and "--comment-out" in steps[claim]["run"]
    for step in steps[claim + 1 :]:
        run = step.get("run", "")
        if any(w in run for w in ("gamut judge", "gamut ledger pull", "gamut comment",
                                  "submission validate")):  # fmt: skip
            assert step["if"] == "steps.claim.outputs.claimed_by == ''", step["name"]
    assert (
        steps[-1]["if"] == "steps.claim.outputs.claimed_by != ''" and "exit 1" in steps[-1]["run"]
    )
    comment = wf["jobs"]["comment"]
    assert "needs.score.outputs.refused_by != ''" in comment["if"]
    assert wf["jobs"]["score"]["outputs"]["refused_by"] == "${{ steps.claim.outputs.claimed_by }}"


def test_the_scoring_runs_title_names_the_validated_head_commit() -> None:
    from gamut.github import SCORE_RUN_NAME, SCORE_WORKFLOW, VALIDATE_WORKFLOW

    assert SCORE_WORKFLOW in NAMES and VALIDATE_WORKFLOW in NAMES
    wf = _load(SCORE_WORKFLOW)
    expected = SCORE_RUN_NAME.format(sha="${{ github.event.workflow_run.head_sha }}")
    assert wf["run-name"] == expected
    assert wf[True]["workflow_run"]["workflows"] == [_load(VALIDATE_WORKFLOW)["name"]]
