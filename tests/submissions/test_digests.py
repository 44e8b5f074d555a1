"""The digests of one command's files (copy-check fingerprints, response lengths): each file read
once per process, shared by validation and scoring, and never a stand-in for a bad file's
problems."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.project import Project as GamutProject
from scoring.submissions import gaming
from scoring.submissions.digests import DigestCache
from scoring.submissions.metadata import check_metadata
from scoring.submissions.report import Limits
from tests.submissions.helpers import RESPONSES, Project, good_lines, reordered

REPO = Path(__file__).resolve().parents[2]
COPY = "7 of 12 responses (58%) are identical to submission 'acme'"


def _copycat(project: Project) -> Path:
    """'acme' with the fixture responses, and 'copycat' that copies seven of them."""
    project.write("acme")
    copied = dict(reordered(RESPONSES))
    for q in list(RESPONSES)[:7]:
        copied[q] = RESPONSES[q]
    return project.write("copycat", multimodal=good_lines(copied))


def _validate(project: Project, *targets: Path) -> list[str]:
    report = pipeline.validate(GamutProject(project.cfg), list(targets) or None)
    assert report.ok, report.to_text()
    return [p.message for p in report.warnings]


def test_a_changed_file_is_fingerprinted_again(project: Project) -> None:
    target = _copycat(project)
    assert _validate(project, target) == [COPY]
    acme = project.subs / "acme" / "multimodal.jsonl"
    acme.write_bytes((target / "multimodal.jsonl").read_bytes())
    (w,) = _validate(project, target)
    assert w == "12 of 12 responses (100%) are identical to submission 'acme'"


def test_fingerprints_are_the_same_in_every_process() -> None:
    text = "The Dish, in the image, is PAD THAI \u2014 caf\u00e9 \ud800 style."
    code = f"from scoring.submissions import gaming; print(gaming.fingerprint({text!r}))"
    seen = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=False,
        )
        seen.add(done.stdout.strip() or done.stderr)
    assert seen == {str(gaming.fingerprint(text))}
    assert gaming.fingerprint("the dish is pad thai") == gaming.fingerprint(
        "The dish is: PAD THAI!"
    )


def test_errors_only_validation_finds_the_errors_of_a_full_one(project: Project) -> None:
    target = _copycat(project)
    assert COPY in _validate(project)
    quick = pipeline.validate(GamutProject(project.cfg), errors_only=True)
    assert quick.ok and quick.warnings == [] and quick.submissions == ["acme", "copycat"]
    # a file that answers too few questions is read in full: its error is the reader's own
    lines = (target / "multimodal.jsonl").read_text("utf-8").splitlines()
    (target / "multimodal.jsonl").write_text("\n".join(lines[1:]) + "\n", "utf-8")
    quick = pipeline.validate(GamutProject(project.cfg), errors_only=True)
    full = pipeline.validate(GamutProject(project.cfg))
    assert quick.rejected == full.rejected == ["copycat"]
    assert [p.message for p in quick.errors] == [p.message for p in full.errors]
    assert "have no response" in quick.errors[0].message


def test_fingerprints_are_made_only_once_a_copy_check_asks_for_them(project: Project) -> None:
    _copycat(project)
    acme = project.subs / "acme" / "multimodal.jsonl"
    cache = DigestCache(Limits())
    plain = cache.of(acme)
    assert plain.fingerprints is None and plain.clean
    assert plain.chars == {q: len(t) for q, t in RESPONSES.items()}
    assert cache.of(acme) is plain  # read once
    full = cache.of(acme, fingerprints=True)
    assert full.fingerprints == {q: gaming.fingerprint(t) for q, t in RESPONSES.items()}
    assert cache.of(acme) is full


def test_metadata_reads_as_the_metadata_check_makes_it() -> None:
    demo = sorted((REPO / "demo" / "submissions").glob("*/submission.yaml"))
    assert demo
    cache = DigestCache(Limits())
    assert [cache.metadata(p) for p in demo] == [check_metadata(p, "")[0] for p in demo]


def test_invalid_metadata_is_reported_by_the_scorer(tmp_path: Path) -> None:
    from gamut.config import load_config
    from scoring.errors import ProblemsError
    from tests.tables.conftest import main_project

    project = GamutProject(load_config(main_project().write(tmp_path)))
    pipeline.score(project)
    meta = tmp_path / "submissions" / "alpha" / "submission.yaml"
    meta.write_text(meta.read_text() + "open_weights: maybe\n")
    with pytest.raises(ProblemsError, match="invalid submission metadata") as err:
        pipeline.score(GamutProject(project.cfg))
    assert err.value.problems and err.value.problems[0].file == str(meta)


def test_one_project_shares_its_digests_between_validation_and_scoring(
    project: Project,
) -> None:
    target = _copycat(project)
    gp = GamutProject(project.cfg)
    assert DigestCache.open(gp.digests, Limits()) is gp.digests  # validation and scoring share it
    assert DigestCache.open(gp.digests, Limits(max_file_bytes=1 << 20)) is not gp.digests
    assert pipeline.validate(gp, [target]).ok
    acme = project.subs / "acme" / "multimodal.jsonl"
    assert gp.digests.of(acme).fingerprints is not None  # the copy check's, kept for the run
