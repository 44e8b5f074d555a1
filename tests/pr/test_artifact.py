"""The artifact handed from the validation workflow to the scoring workflow, checked as data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from gamut.pr import annotate, pack_artifact, unpack_artifact
from gamut.project import Project
from scoring.errors import GamutError, ProblemsError
from tests.hub.conftest import write_config

SHA = "a" * 40
REPORT = {"ok": True, "submissions": ["my-model"], "n_errors": 0, "n_warnings": 1,
          "problems": [{"file": "submissions/my-model/multimodal.jsonl", "line": 3,
                        "severity": "warning", "message": "response far longer than the rest",
                        "fix": "check for a runaway generation"}]}  # fmt: skip


def _cfg(root: Path) -> Project:
    cfg = Project.load(write_config(root, "rubrics", extra=""))
    sub = root / "submissions" / "my-model"
    sub.mkdir(parents=True)
    (sub / "submission.yaml").write_text("model_name: M\n")
    (sub / "multimodal.jsonl").write_text('{"question_id": "q1", "response": "r"}\n')
    return cfg


def test_pack_then_unpack_round_trip(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path / "pr")
    art = tmp_path / "artifact"
    info = pack_artifact(cfg, REPORT, 17, SHA, art)
    assert (info.pr_number, info.submission_id) == (17, "my-model")
    assert sorted(p.relative_to(art).as_posix() for p in art.rglob("*") if p.is_file()) == [
        "pr.json", "submissions/my-model/multimodal.jsonl", "submissions/my-model/submission.yaml",
        "validation.json",
    ]  # fmt: skip
    base = _base(tmp_path / "base")
    got = unpack_artifact(base, art)
    assert (got.pr_number, got.head_sha, got.submission_id) == (17, SHA, "my-model")
    dest = tmp_path / "base" / "submissions" / "my-model"
    assert (dest / "multimodal.jsonl").read_text() == '{"question_id": "q1", "response": "r"}\n'
    assert got.submission_path.endswith("submissions/my-model")
    assert "pr_number=17\n" in got.as_outputs()


def _base(root: Path) -> Project:
    cfg = Project.load(write_config(root, "rubrics"))
    (root / "submissions").mkdir(parents=True, exist_ok=True)
    return cfg


def _artifact(root: Path, files: dict[str, bytes], pr: object = None) -> Path:
    pr = pr if pr is not None else {"pr_number": 5, "head_sha": SHA, "submission_id": "my-model"}
    for rel, data in {**files, "pr.json": json.dumps(pr).encode()}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


GOOD = {"submissions/my-model/submission.yaml": b"x: 1\n",
        "submissions/my-model/multimodal.jsonl": b"{}\n"}  # fmt: skip


def test_pack_refuses_failed_or_multiple(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    with pytest.raises(GamutError, match="has errors"):
        pack_artifact(cfg, {**REPORT, "ok": False}, 1, SHA, tmp_path / "a")
    with pytest.raises(GamutError, match="exactly one"):
        pack_artifact(cfg, {**REPORT, "submissions": ["my-model", "other"]}, 1, SHA, tmp_path / "a")
    with pytest.raises(GamutError, match="40 lowercase hex"):
        pack_artifact(cfg, REPORT, 1, "HEAD", tmp_path / "a")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({".github/workflows/evil.yml": b"on: push"}, "unexpected path"),
        ({"submissions/my-model/run.py": b"import os"}, "unexpected path"),
        ({"gamut.toml": b"[benchmark]"}, "unexpected path"),
        ({"submissions/other-model/multimodal.jsonl": b"{}"}, "holds 2 submissions"),
    ],
)
def test_unpack_rejects_anything_but_one_submission(
    tmp_path: Path, extra: dict[str, bytes], words: str
) -> None:
    art = _artifact(tmp_path / "art", {**GOOD, **extra})
    with pytest.raises(ProblemsError, match=words):
        unpack_artifact(_base(tmp_path / "base"), art)
    assert not (tmp_path / "base" / "submissions" / "my-model").exists()


def test_unpack_rejects_symlinks_and_huge_files(tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", GOOD)
    (art / "submissions/my-model/text_only.jsonl").symlink_to("/etc/passwd")
    with open(art / "submissions/my-model/multimodal.jsonl", "r+b") as f:
        f.truncate(17 * 1024 * 1024)
    with pytest.raises(ProblemsError) as exc:
        unpack_artifact(_base(tmp_path / "base"), art)
    text = str(exc.value)
    assert "not a regular file" in text and "at most 16777216" in text


@pytest.mark.parametrize(
    "pr",
    [
        {"pr_number": "5", "head_sha": SHA, "submission_id": "my-model"},
        {"pr_number": 5, "head_sha": "abc", "submission_id": "my-model"},
        {"pr_number": 5, "head_sha": SHA, "submission_id": "../x"},
        {"pr_number": -1, "head_sha": SHA, "submission_id": "my-model"},
        ["not", "an", "object"],
    ],
)
def test_unpack_rejects_a_malformed_pr_file(tmp_path: Path, pr: object) -> None:
    art = _artifact(tmp_path / "art", GOOD, pr)
    with pytest.raises(GamutError):
        unpack_artifact(_base(tmp_path / "base"), art)


def test_unpack_replaces_an_existing_folder_of_that_id(tmp_path: Path) -> None:
    base = _base(tmp_path / "base")
    old = tmp_path / "base" / "submissions" / "my-model"
    old.mkdir()
    (old / "text_only.jsonl").write_text("stale\n")
    unpack_artifact(base, _artifact(tmp_path / "art", GOOD))
    assert sorted(p.name for p in old.iterdir()) == ["multimodal.jsonl", "submission.yaml"]


def test_annotations_and_step_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = {**REPORT, "ok": False, "problems": [
        {"file": "submissions/my-model/multimodal.jsonl", "line": 7, "severity": "error",
         "message": "unknown question id q9", "fix": "remove the line"}, *REPORT["problems"]]}  # type: ignore[list-item]  # fmt: skip
    result = annotate(report)
    assert result.commands[0] == (
        "::error title=GAMUT submission,file=submissions/my-model/multimodal.jsonl,line=7::"
        "unknown question id q9 (remove the line)"
    )
    assert result.commands[1].startswith("::warning ") and "line=3" in result.commands[1]
    md = result.summary
    assert "## Submission validation failed" in md and "1 error(s), 1 warning(s)" in md
    path = tmp_path / "v.json"
    path.write_text(json.dumps(report))
    r = CliRunner().invoke(main, ["pr", "annotate", str(path)])
    assert r.exit_code == 0, r.output
    assert r.stdout == "".join(c + "\n" for c in result.commands)  # the runner reads stdout
    assert summary.read_text(encoding="utf-8") == md + "\n"


def test_cli_pack_and_unpack(tmp_path: Path) -> None:
    _cfg(tmp_path / "pr")
    report = tmp_path / "v.json"
    report.write_text(json.dumps(REPORT))
    art = tmp_path / "art"
    r = CliRunner().invoke(
        main,
        [
            "pr",
            "pack",
            "--config",
            str(tmp_path / "pr" / "gamut.toml"),
            str(report),
            "--pr",
            "9",
            "--head-sha",
            SHA,
            "--out",
            str(art),
        ],
    )
    assert r.exit_code == 0, r.output
    _base(tmp_path / "base")
    cwd = os.getcwd()
    base_cfg = str(tmp_path / "base" / "gamut.toml")
    r = CliRunner().invoke(main, ["pr", "unpack", "--config", base_cfg, str(art)])
    assert os.getcwd() == cwd
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"pr_number=9\nhead_sha={SHA}\nsubmission_id=my-model\n")
