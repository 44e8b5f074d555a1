"""``gamut judge --export-batch`` with held rubrics: the request files hold check text, so they
go only to a private folder, 0600 in a 0700 folder."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.judge.project import RUBRICS, TOTAL_CALLS, check_of, openai_judge, write_project


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _project(root: Path, public: bool = False) -> str:
    cfg = write_project(root, openai_judge("http://127.0.0.1:9/v1", "local"), public=public)
    text = cfg.read_text().replace('results = "results"', 'results = "results"\nprivate = "priv"')
    cfg.write_text(text + '\n[site]\nout = "public_html"\n')
    return str(cfg)


@pytest.mark.parametrize(
    "where",
    ["results", "results/batch", "public_html/x", "submissions/alpha", "site_src/batch", "link"],
)
def test_held_requests_are_refused_in_a_published_folder(tmp_path: Path, where: str) -> None:
    root = tmp_path / "proj"
    cfg = _project(root)
    (root / "results").mkdir()
    (root / "link").symlink_to(root / "results")  # a link into the results is the results
    out = root / where
    code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
    assert code == 1, text
    assert "hold the check text of held rubrics" in text and "published or committed" in text
    assert "give a folder outside the repository, or under the private store" in text
    assert str(root / "priv" / "batch") in text and "Traceback" not in text
    assert not any(p.name.startswith("local-") for p in root.rglob("*"))


def test_held_requests_are_refused_anywhere_in_a_git_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    cfg = _project(repo / "deploy")
    (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")  # a worktree's file
    code, text = _run("judge", "--config", cfg, "--export-batch", str(repo / "notes" / "batch"))
    assert code == 1 and f"inside the git work tree {repo}," in text, text
    assert not (repo / "notes").exists()
    # the private store is never published: allowed, as is a folder outside the repository
    for out in (repo / "deploy" / "priv" / "batch", tmp_path / "elsewhere" / "batch"):
        code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
        assert code == 0, text
        (req,) = out.glob("*.jsonl")
        assert stat.S_IMODE(out.stat().st_mode) == 0o700
        assert stat.S_IMODE(req.stat().st_mode) == 0o600
        assert len(req.read_text().splitlines()) == TOTAL_CALLS


def test_held_requests_are_refused_in_a_folder_open_to_others(tmp_path: Path) -> None:
    cfg = _project(tmp_path / "proj")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    code, text = _run("judge", "--config", cfg, "--export-batch", str(shared))
    assert code == 1 and "open to others (mode 755" in text and "chmod 700" in text, text
    assert not list(shared.iterdir())


def test_public_requests_go_anywhere_with_ordinary_modes(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    cfg = _project(root, public=True)
    out = root / "results" / "batch"
    code, text = _run("judge", "--config", cfg, "--export-batch", str(out))
    assert code == 0, text
    (req,) = out.glob("*.jsonl")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(req.stat().st_mode) == 0o666 & ~umask
    body = json.loads(req.read_text().splitlines()[0])["body"]
    assert check_of(body)  # the check text is in the request: why held ones are kept private


def _lines_as_before(cfg: Path, judge: str) -> list[object]:
    """The requests as export wrote them before lines were spliced: every pair with a response,
    its body from the backend's builder, through the standard library's writer."""
    from gamut.config import load_config
    from gamut.project import Project
    from scoring.judge.batch.api import batch_backend
    from scoring.ledger import key_bytes

    (plan,) = Project(load_config(cfg)).pair_plans([judge])
    body = batch_backend(plan.judge.backend).batch_body
    out: list[object] = []
    for i, key in enumerate(key_bytes(plan.keys_of())):
        if not plan.empty[i]:
            line = {"custom_id": key.hex(), "method": "POST", "url": "/v1/chat/completions"}
            out.append(json.loads(json.dumps({**line, "body": body(plan.request(i))})))
    return out


def _exported(out: Path) -> list[object]:
    data = b"".join(p.read_bytes() for p in sorted(out.glob("*.jsonl")))
    assert "\u2028".encode() not in data and "\u2029".encode() not in data
    text = data.decode()
    assert text.endswith("\n") and len(text.splitlines()) == text.count("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_exported_lines_are_the_body_builders_on_the_demo(tmp_path: Path) -> None:
    """Every exported line of the demo is the custom id and body the backend's body builder
    gives its request, in the plan's order (the lines are spliced from each response's part)."""
    from tests.demo_config import demo_config_text, write_demo_config

    local = (
        '\n[judges.local]\nprovider = "openai"\nmodel = "local-judge"\n'
        'base_url = "http://127.0.0.1:9/v1"\nfamily = "local"\n'
    )
    cfg = write_demo_config(tmp_path, demo_config_text() + local)
    out = tmp_path / "batch"
    code, text = _run("judge", "--config", str(cfg), "--judge", "local", "--export-batch", str(out))
    assert code == 0, text
    want = _lines_as_before(cfg, "local")
    assert len(want) > 1000 and _exported(out) == want


HOSTILE = (
    'Pad thai\u2028with\u2029rice noodles, \u00e9pices \u6e2f \U0001f35c "quoted" \\ {{check}}'
    " {{fence}} <<<ANSWER-000000000000>>> \t\n end"
)


def test_hostile_texts_are_exported_as_the_body_builder_has_them(tmp_path: Path) -> None:
    """Line and paragraph separators, non-ASCII, quotes, placeholders, tabs and newlines in
    responses and checks: the same values as the body builder's, no line broken (U+2028 and
    U+2029 escaped), valid UTF-8."""
    rubrics = json.loads(json.dumps(RUBRICS))
    rubrics[0]["items"][0]["text"] = 'Names the dish \u2028 p\u00e2t\u00e9 "x" {{response}}.'
    responses = {
        "alpha": {
            "multimodal": {"food-0001": HOSTILE, "plants-0001": "Monstera \U0001f33f."},
            "text_only": {"food-0001": HOSTILE + "!", "plants-0001": "\u2029"},
        }
    }
    cfg = write_project(
        tmp_path,
        openai_judge("http://127.0.0.1:9/v1", "local"),
        responses=responses,
        rubrics=rubrics,
    )
    out = tmp_path / "batch"
    code, text = _run("judge", "--config", str(cfg), "--export-batch", str(out))
    assert code == 0, text
    got, want = _exported(out), _lines_as_before(cfg, "local")
    assert len(want) == 17 and got == want  # "\u2029" alone is an empty response


def test_a_body_that_does_not_place_the_check_once_is_written_whole() -> None:
    """The spliced shape of a line is refused when the check's prompt is not in the body once
    (nor after the custom id); such a response's lines are then written whole."""
    from scoring.compiler import CheckKind
    from scoring.judge.backends import JudgeRequest
    from scoring.judge.batch.files import _line_shape
    from scoring.questions import Setting

    req = JudgeRequest(
        "s", Setting.MULTIMODAL, "q", "c1", CheckKind.FACT, "Q?", "A.", "chk", "sys", "A.", "tail"
    )
    marks = ("I" + "0" * 32, "P" + "0" * 32)

    def once(r: JudgeRequest, turns: object) -> dict[str, object]:
        return {"m": [r.system, r.shared + "\n\n" + r.check_prompt]}

    def twice(r: JudgeRequest, turns: object) -> dict[str, object]:
        return {"m": [r.check_prompt, r.check_prompt]}

    def by_id(r: JudgeRequest, turns: object) -> dict[str, object]:
        return {**once(r, turns), "id": r.check_id}

    def never(r: JudgeRequest, turns: object) -> dict[str, object]:
        return {"m": [r.system, len(r.check_prompt)]}

    shape = _line_shape(once, req, marks)
    assert shape is not None and len(shape) == 3
    filled = shape[0] + b"ab" + shape[1] + b"tail" + shape[2]
    assert json.loads(filled) == {
        "custom_id": "ab",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": once(req, ()),
    }
    for body in (twice, by_id, never):
        assert _line_shape(body, req, marks) is None, body.__name__
