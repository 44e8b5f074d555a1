"""A third-party backend reaches the ``gamut`` command through a Python entry point alone.

Nothing is installed: a dist-info folder in a temporary directory on ``PYTHONPATH`` declares the
entry point (``importlib.metadata`` reads it as it reads any installed package's), and the
command runs in a fresh process, as a user's would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from scoring.judge.providers import ENTRY_POINT_GROUP
from tests.judge.project import TOTAL_CALLS, TOTAL_CHECKS, write_project

ROOT = Path(__file__).resolve().parents[2]

#: The third party's module: a backend that finds every check met, and needs no API key.
PLUGIN = '''
import json

from scoring.judge import Backend, Completion, JudgeRequest, Turn


class AcmeBackend(Backend):
    """Every check is met."""

    calls_out = False
    needs_key = False

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        return Completion(text=json.dumps({"verdict": "meets", "rationale": "acme says so"}))
'''

JUDGE = '[judges.acme]\nprovider = "acme"\nmodel = "acme-1"\nfamily = "none"\nprimary = true\n'


def _plugin(where: Path) -> Path:
    """The module and its dist-info (name, version, entry point) under ``where``."""
    where.mkdir()
    (where / "acme_gamut_judge.py").write_text(PLUGIN, encoding="utf-8")
    info = where / "acme_gamut_judge-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-gamut-judge\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nacme = acme_gamut_judge:AcmeBackend\n", encoding="utf-8"
    )
    return where


def _gamut(plugins: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    path = [str(ROOT), *([str(plugins)] if plugins else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, "-m", "gamut", *args], env=env, capture_output=True, text=True
    )


def test_a_backend_registered_by_entry_point_judges_through_the_gamut_command(
    tmp_path: Path,
) -> None:
    cfg = str(write_project(tmp_path / "project", JUDGE))
    plugins = _plugin(tmp_path / "site")
    run = _gamut(plugins, "judge", "--config", cfg)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{TOTAL_CALLS} given offline" in run.stdout + run.stderr  # the backend calls out not
    df = pd.read_parquet(tmp_path / "project" / "results" / "verdicts.parquet")
    assert len(df) == TOTAL_CHECKS
    # the empty responses get "missing" without a call; every judged check was met by acme
    judged = df[df["verdict"] != "missing"]
    assert len(judged) == TOTAL_CALLS and set(judged["verdict"].astype(str)) == {"meets"}


def test_without_the_entry_point_the_provider_is_unknown(tmp_path: Path) -> None:
    """The same config without the dist-info on the path: refused, the known names listed."""
    cfg = str(write_project(tmp_path / "project", JUDGE))
    run = _gamut(None, "judge", "--config", cfg)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "unknown provider 'acme'" in run.stderr and "openai" in run.stderr
