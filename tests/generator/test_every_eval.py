"""The leaderboard in Every Eval Ever's format, validated by that project's own schema file:
``eval.schema.json`` of the ``every-eval-ever`` 0.3.0 wheel (the package needs Python 3.12, so
the wheel is fetched with ``pip download`` into ``.cache/`` once, checked against its pinned
sha256, and the schema read from it; nothing of it is kept in the repository)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator.every_eval import FILE, write_every_eval
from tests.tables.test_audit import LINES, audited_project

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.3.0"
WHEEL = f"every_eval_ever-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "564b8bc624c1f822f749a769dc69dc058a736e83d920cbeb147c3a30d3152317"
CACHE = ROOT / ".cache" / "every-eval-ever"

pytestmark = pytest.mark.slow


def _wheel() -> Path:
    """The pinned wheel, downloaded once into ``.cache/`` (through a staging folder, so a
    killed download leaves nothing that looks complete)."""
    wheel = CACHE / WHEEL
    if not wheel.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--python-version",
                   "3.12", "--only-binary=:all:", f"every-eval-ever=={VERSION}",
                   "-d", tmp]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
            assert proc.returncode == 0, proc.stderr[-2000:]
            os.replace(Path(tmp) / WHEEL, wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest == WHEEL_SHA256, f"{wheel} is not the pinned wheel (sha256 {digest})"
    return wheel


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    with zipfile.ZipFile(_wheel()) as z:
        schema = json.loads(z.read("every_eval_ever/schemas/eval.schema.json"))
    assert schema["version"] == VERSION
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, dict[str, Any], Path]:
    root = tmp_path_factory.mktemp("eee")
    project = Project(load_config(audited_project(root / "project", LINES)))
    tables = pipeline.score(project)
    lb = tables.frames["leaderboard"]
    assert write_every_eval(lb, tables.provenance, root) == lb["submission_id"].nunique()
    return lb, tables.provenance, root / FILE


def _documents(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_document_validates_against_the_projects_schema(
    validator: jsonschema.protocols.Validator, exported: tuple[pd.DataFrame, dict[str, Any], Path]
) -> None:
    _, _, path = exported
    docs = _documents(path)
    assert len(docs) == 2
    for doc in docs:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, errors
    broken = json.loads(json.dumps(docs[0]))
    del broken["evaluation_results"][0]["score_details"]["score"]
    broken["model_info"]["additional_details"]["model_availability"] = "weights"
    assert len(list(validator.iter_errors(broken))) == 2  # the schema does reject bad documents


def test_scores_carry_the_bootstrap_and_corrected_intervals_and_their_judge(
    exported: tuple[pd.DataFrame, dict[str, Any], Path],
) -> None:
    lb, prov, path = exported
    results = {
        (doc["model_info"]["additional_details"]["submission_id"], r["evaluation_result_id"]): r
        for doc in _documents(path)
        for r in doc["evaluation_results"]
    }
    corrected = 0
    for row in lb.to_dict(orient="records"):
        key = f"{row['setting']}/{row['judge']}"
        plain = results[(row["submission_id"], f"{key}/gamut")]
        details = plain["score_details"]
        assert details["score"] == pytest.approx(row["gamut"])
        ci = details["uncertainty"]["confidence_interval"]
        assert (ci["lower"], ci["upper"]) == pytest.approx((row["gamut_lo"], row["gamut_hi"]))
        assert "bootstrap" in ci["method"] and ci["confidence_level"] == 0.95
        boot = details["uncertainty"]["num_bootstrap_samples"]
        assert boot == prov["scoring"]["bootstrap_resamples"]
        (judge,) = plain["metric_config"]["llm_scoring"]["judges"]
        want = prov["judges"][row["judge"]]
        assert judge["model_info"]["id"] == f"{want['provider']}/{want['model']}"
        ppi = results.get((row["submission_id"], f"{key}/gamut_ppi"))
        assert (ppi is None) == bool(pd.isna(row["gamut_ppi"]))
        if ppi is not None:
            got = ppi["score_details"]["uncertainty"]["confidence_interval"]
            assert ppi["score_details"]["score"] == pytest.approx(row["gamut_ppi"])
            assert (got["lower"], got["upper"]) == pytest.approx(
                (row["gamut_ppi_lo"], row["gamut_ppi_hi"])
            )
            corrected += 1
    assert corrected >= 1  # the audited row
