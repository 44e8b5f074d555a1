"""The light commands import only what they use: no table, chart, site or provider library.

Each command runs in a fresh interpreter, which then reports the top-level packages it imported.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.submissions.helpers import CONFIG, FIXTURES, GOOD_META, good_lines, jsonl

ROOT = Path(__file__).resolve().parents[2]
#: Packages no light command may import.
HEAVY = frozenset(
    {"pandas", "pyarrow", "numpy", "plotly", "mkdocs", "openai", "anthropic", "huggingface_hub"}
)
#: ... and the command list, which prints no problem or result, does not import rich either.
PLAIN = HEAVY | {"rich"}

_RUN = """
import json, sys
from gamut.cli import main
try:
    main(sys.argv[1:], prog_name="gamut")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stdout.flush()
print(json.dumps({"exit": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}),
      file=sys.stderr)
"""


def _imports(args: list[str], cwd: Path, cli: str = "gamut.cli") -> set[str]:
    """The top-level packages ``gamut ARGS`` imports (the program of module ``cli``); the command
    must succeed."""
    code = _RUN.replace("from gamut.cli import main", f"from {cli} import main")
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["exit"] in (0, None), done.stdout + done.stderr
    return set(report["modules"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the fixture questions, the demo rubrics and one clean submission."""
    root = tmp_path
    shutil.copy(FIXTURES / "questions.jsonl", root / "questions.jsonl")
    shutil.copytree(ROOT / "demo" / "rubrics", root / "rubrics")
    (root / "gamut.toml").write_text(CONFIG, encoding="utf-8")
    folder = root / "submissions" / "acme"
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text(json.dumps(GOOD_META), encoding="utf-8")
    (folder / "multimodal.jsonl").write_text(jsonl(good_lines()), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("args", "forbidden"),
    [
        (["--help"], PLAIN),
        (["submission", "validate", "submissions/acme"], HEAVY),
        (["submission", "validate", "--format", "json"], HEAVY),
        (["submission", "new", "newcomer"], HEAVY),
        (["rubric", "lint", "rubrics"], HEAVY),
        (["schema", "schemas"], HEAVY),
        (["questions", "export", "--setting", "text_only", "--out", "q.jsonl"], HEAVY),
        (["score", "--help"], HEAVY),
        (["run", "--help"], HEAVY),
        (["build", "--help"], HEAVY),  # the workbench's command, found by its entry point
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "light" if v is HEAVY else "plain",
)
def test_light_commands_import_no_heavy_library(
    project: Path, args: list[str], forbidden: frozenset[str]
) -> None:
    imported = _imports(args, project)
    assert "gamut" in imported and "click" in imported  # the probe saw the command run
    assert not imported & forbidden, sorted(imported & forbidden)


@pytest.mark.parametrize("args", [["--help"], ["build", "--help"]])
def test_the_workbench_help_imports_no_heavy_library(project: Path, args: list[str]) -> None:
    imported = _imports(args, project, "workbench.cli")
    assert "workbench" in imported and "click" in imported
    assert not imported & HEAVY, sorted(imported & HEAVY)


def test_the_probe_sees_heavy_imports(project: Path) -> None:
    # `gamut score` reads tables: the same probe reports pandas there, so an empty set above
    # means the light commands really did not import it
    done = subprocess.run(
        [sys.executable, "-c", _RUN, "score"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["exit"] == 1  # no verdict table yet
    assert {"pandas", "numpy"} <= set(report["modules"])


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["no-such-command"], 2)])
@pytest.mark.parametrize(
    ("package", "program"), [("gamut", "gamut"), ("workbench", "gamut-workbench")]
)
def test_the_program_exits_with_the_commands_code_and_its_output(
    project: Path, args: list[str], code: int, package: str, program: str
) -> None:
    # `python -m gamut` (`python -m workbench`) is the installed program's entry point (`run`):
    # the code and the output are the command's
    done = subprocess.run(
        [sys.executable, "-m", package, *args], cwd=project, capture_output=True, text=True
    )
    assert done.returncode == code
    if code == 0:
        assert done.stdout.startswith(f"{program}, version ")
    else:
        assert "No such command 'no-such-command'" in done.stderr


def test_the_installed_program_is_run() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    # as `python -m gamut` and `python -m workbench`, tested above
    assert scripts == {"gamut": "gamut.cli:run", "gamut-workbench": "workbench.cli:run"}
