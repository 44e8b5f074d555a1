"""`gamut-workbench build demo`: every workbench step offline, ending with a release the
leaderboard reads."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main as gamut_main
from scoring.questions import load_questions
from scoring.rubric_io import load_rubrics, read_rubrics, rubric_set_version
from tests.demo_config import write_demo_config
from tests.workbench.helpers import run
from workbench.demo import demo_data
from workbench.questions import CANDIDATES, State
from workbench.store import Workbench


def _held_strings(rubrics: Path) -> list[str]:
    out = []
    for f in rubrics.glob("*.json"):
        r = json.loads(f.read_text())
        out += [s["text"] for s in r["snippets"]]
        for item in r["items"]:
            out += [str(item[k]) for k in ("text", "topic") if k in item]
            out += [str(m) for m in item.get("members", [])]
    return out


def test_demo_runs_every_step_to_a_release(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    code, printed = run("build", "demo", "--out", str(out))
    assert code == 0, printed
    assert "demo release demo-1.0" in printed
    # the printed follow-up command shows that workbench, and creates nothing elsewhere
    hint = printed.split("its workbench: gamut-workbench ")[1].split()
    cfg = write_demo_config(tmp_path / "cfg")
    code, status = run(*hint, "--config", str(cfg))
    assert code == 0 and f"workbench {out / 'workbench'}\n" in status, status
    assert "questions: 4" in status
    code, status = run("build", "status", "--config", str(cfg))
    assert code == 0 and "(not started)" in status
    assert not (tmp_path / "cfg" / ".gamut").exists()
    questions = load_questions(out / "questions.jsonl")
    assert sorted(q.question_id for q in questions) == [
        "animals-0001",
        "food-0001",
        "plants-0001",
        "plants-0002",
    ]
    good, problems = read_rubrics([out / "rubrics"])
    assert not problems and len(good) == 4
    lint = CliRunner().invoke(gamut_main, ["rubric", "lint", str(out / "rubrics")])
    assert lint.exit_code == 0, lint.output
    meta = json.loads((out / "release.json").read_text())
    assert meta["benchmark_version"] == "demo-1.0" and meta["n_questions"] == 4
    # the rubric version the leaderboard stamps on its provenance names this release
    assert meta["rubric_version"] == rubric_set_version(load_rubrics([out / "rubrics"]))
    changelog = (out / "CHANGELOG.md").read_text()
    assert "## Questions added (4)" in changelog and "- food-0001/I1" in changelog
    # held text appears in no output and no changelog
    for text in _held_strings(out / "rubrics"):
        assert text not in printed and text not in changelog


def test_demo_went_through_each_path_of_the_rounds(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert run("build", "demo", "--out", str(out))[0] == 0
    wb = Workbench(out / "workbench")
    assert stat.S_IMODE((out / "workbench").stat().st_mode) == 0o700
    assert stat.S_IMODE(wb.path(CANDIDATES).stat().st_mode) == 0o600
    cands = wb.read(CANDIDATES)
    # the revised candidate re-entered round 2 with the annotators' text, then was accepted
    food = cands["img-food-0001.c1"]
    assert food["round"] == 2 and food["state"] == State.ENTERED
    assert food["question"] == "What is this noodle dish and what goes into it?"
    # all of one image's candidates were discarded: it was proposed for again (c3, c4); the
    # guard rejected c4 (stranger test), found c3 boilerplate and seeded c5, which entered
    animals = {k: v["state"] for k, v in cands.items() if k.startswith("img-animals")}
    assert animals == {
        "img-animals-0001.c1": "discarded",
        "img-animals-0001.c2": "discarded",
        "img-animals-0001.c3": "not_selected",
        "img-animals-0001.c4": "guard_rejected",
        "img-animals-0001.c5": "entered",
    }
    assert cands["img-animals-0001.c5"]["source"] == "guard#1"
    # a disagreement went to the adjudicator
    assert cands["img-plants-0001.c2"]["state"] == "discarded"
    status = wb.read("rubric_status.json")
    assert status["food-0001"]["draft_repairs"] == 1
    assert status["animals-0001"]["refine_repairs"] == 1
    assert status["plants-0002"]["removed"] == ["I6"]
    # the audit re-verified the cited snippets against the saved pages: one page was rewritten
    audits = [status[q]["audit"] for q in sorted(status)]
    states = [s for a in audits for s in a["snippets"].values()]
    assert states.count("not_found") == 1 and states.count("verified") == len(states) - 1
    assert any(a["partial"] for a in audits)
    assert "I6" not in {i["id"] for i in wb.read("rubrics/plants-0002.json")["items"]}


def test_demo_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("keep")
    code, out = run("build", "demo", "--out", str(tmp_path))
    assert code == 1 and "not empty" in out
    assert demo_data().joinpath("llm.jsonl").is_file()


def test_the_demo_ships_its_inputs_as_package_data() -> None:
    """`gamut-workbench build demo` reads nothing of the repository: every file it needs is under
    workbench/demo_data/, every one of them is named by pyproject's package data, and the
    images are the repository's demo images of the same names."""
    import fnmatch
    import tomllib

    from workbench import demo

    root = Path(demo.__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["workbench"]
    package = root / "workbench"
    files = [f for f in demo_data().rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert len(files) >= 10
    for f in files:
        rel = f.relative_to(package).as_posix()
        # a package-data glob's * does not cross folders
        assert any(
            Path(rel).parent == Path(g).parent and fnmatch.fnmatchcase(f.name, Path(g).name)
            for g in globs
        ), f"{rel} is not package data"
    manifest = (demo_data() / "manifest.csv").read_text(encoding="utf-8").splitlines()[1:]
    names = [Path(line.split(",")[1]).name for line in manifest]
    assert len(names) == 4
    for name in names:
        shipped = demo.DEMO_IMAGES / name
        assert shipped.read_bytes() == (root / "demo" / "images" / name).read_bytes(), name
    assert '"demo" / "images"' not in Path(demo.__file__).read_text(encoding="utf-8")


def test_the_leaderboard_reads_the_benchmark_version_of_a_release(tmp_path: Path) -> None:
    from gamut.benchmark_version import benchmark_version
    from gamut.project import Project
    from scoring.errors import GamutError

    out = tmp_path / "demo"
    assert run("build", "demo", "--out", str(out))[0] == 0

    def project(questions: Path, extra: str = "") -> Project:
        cfg = tmp_path / "gamut.toml"
        cfg.write_text(
            f'[benchmark]\nquestions = "{questions}"\nrubrics = "{out / "rubrics"}"\n{extra}',
            encoding="utf-8",
        )
        return Project.load(cfg)

    assert benchmark_version(project(out / "questions.jsonl")) == "demo-1.0"
    given = project(out / "questions.jsonl", 'benchmark_version = "gamut-2.1"\n')
    assert benchmark_version(given) == "gamut-2.1"  # the config's word wins
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "questions.jsonl").write_bytes((out / "questions.jsonl").read_bytes())
    assert benchmark_version(project(tmp_path / "q" / "questions.jsonl")) is None
    (tmp_path / "q" / "release.json").write_text('{"n_questions": 4}', encoding="utf-8")
    with pytest.raises(GamutError, match=r"release.json: no benchmark_version string"):
        benchmark_version(project(tmp_path / "q" / "questions.jsonl"))
