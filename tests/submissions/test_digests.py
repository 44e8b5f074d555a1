"""The cache of response file digests (copy-check fingerprints, response lengths): used when valid,
rebuilt when not, and never a stand-in for a bad file's problems."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gamut import pipeline
from gamut.project import Project as GamutProject
from scoring.submissions import gaming
from scoring.submissions.digests import VERSION, DigestCache, content_hash
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


def _cache_file(project: Project) -> Path:
    return GamutProject(project.cfg).digests_path


def _files(project: Project) -> dict[str, dict[str, object]]:
    doc = json.loads(_cache_file(project).read_text())
    assert (doc["format"], doc["version"]) == ("gamut-response-digests", VERSION)
    files: dict[str, dict[str, object]] = doc["files"]
    return files


def _sha(path: Path) -> str:
    """The entry key of a file read under the default limits."""
    return hashlib.sha256(path.read_bytes()).hexdigest() + ":32768:8388608"


def test_the_first_validation_caches_the_other_submissions_by_content(project: Project) -> None:
    target = _copycat(project)
    assert not _cache_file(project).exists()
    assert _validate(project, target) == [COPY]
    acme = project.subs / "acme" / "multimodal.jsonl"
    entry = _files(project)[_sha(acme)]
    assert entry["ids"] == list(RESPONSES)
    assert len(str(entry["fingerprints"])) == 16 * len(RESPONSES)
    assert entry["chars"] == [len(t) for t in RESPONSES.values()] and entry["clean"] is True
    # only the other submission is cached: the validated one is read in full anyway
    assert set(_files(project)) == {_sha(acme)}


def test_a_warm_validation_reads_the_cache_and_gives_the_same_report(project: Project) -> None:
    target = _copycat(project)
    cold = _validate(project, target)
    written = _cache_file(project).read_bytes()
    assert _validate(project, target) == cold == [COPY]
    assert _cache_file(project).read_bytes() == written  # nothing changed: not rewritten
    # the cache is what the copy check uses: planted fingerprints of acme's content change it
    acme = project.subs / "acme" / "multimodal.jsonl"
    doc = json.loads(written)
    doc["files"][_sha(acme)]["fingerprints"] = "00" * 8 * len(RESPONSES)
    _cache_file(project).write_text(json.dumps(doc))
    assert _validate(project, target) == []


def test_a_changed_file_is_fingerprinted_again(project: Project) -> None:
    target = _copycat(project)
    assert _validate(project, target) == [COPY]
    # acme now holds copycat's responses: a new content hash, so no stale fingerprints
    acme = project.subs / "acme" / "multimodal.jsonl"
    acme.write_bytes((target / "multimodal.jsonl").read_bytes())
    (w,) = _validate(project, target)
    assert w == "12 of 12 responses (100%) are identical to submission 'acme'"
    assert _sha(acme) in _files(project)


@pytest.mark.parametrize(
    "damage",
    [
        b"\xff\xfe not UTF-8",
        b'{"format": "gamut-response-digests", "version": 1, "files": ',
        b"[" * 100_000,
        json.dumps({"format": "gamut-response-digests", "version": 0, "files": {}}).encode(),
        b"[]",
    ],
    ids=["not-utf8", "truncated", "too-deep", "other-version", "not-an-object"],
)
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(project: Project, damage: bytes) -> None:
    target = _copycat(project)
    path = _cache_file(project)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    assert _validate(project, target) == [COPY]
    assert set(_files(project)) == {_sha(project.subs / "acme" / "multimodal.jsonl")}


_GOOD = {"ids": ["a"], "fingerprints": "00" * 8, "chars": [3], "clean": True}


@pytest.mark.parametrize(
    "entry",
    [
        "not an entry",
        {**_GOOD, "fingerprints": "zz" * 8},
        {**_GOOD, "ids": ["a", "a"], "fingerprints": "00" * 16, "chars": [1, 1]},
        {**_GOOD, "ids": ["a", 1], "fingerprints": "00" * 16, "chars": [1, 1]},
        {**_GOOD, "fingerprints": "00" * 4},
        {**_GOOD, "ids": "a"},
        {**_GOOD, "chars": [3, 4]},
        {**_GOOD, "chars": [-1]},
        {**_GOOD, "chars": [True]},
        {**_GOOD, "clean": "yes"},
        {k: v for k, v in _GOOD.items() if k != "chars"},
    ],
    ids=[
        "not-object",
        "not-hex",
        "duplicate-id",
        "id-not-string",
        "short",
        "ids-not-list",
        "chars-too-many",
        "chars-negative",
        "chars-bool",
        "clean-not-bool",
        "no-chars",
    ],
)
def test_a_malformed_entry_is_computed_again(project: Project, entry: object) -> None:
    target = _copycat(project)
    acme = project.subs / "acme" / "multimodal.jsonl"
    path = _cache_file(project)
    path.parent.mkdir(parents=True)
    doc = {"format": "gamut-response-digests", "version": VERSION}
    path.write_text(json.dumps({**doc, "files": {_sha(acme): entry}}))
    assert _validate(project, target) == [COPY]
    assert _files(project)[_sha(acme)]["ids"] == list(RESPONSES)


def test_validating_everything_drops_entries_of_files_that_are_gone(project: Project) -> None:
    target = _copycat(project)
    project.write("third", multimodal=good_lines(reordered(reordered(RESPONSES))))
    _validate(project, target)
    old = _sha(project.subs / "third" / "multimodal.jsonl")
    assert old in _files(project)
    # one submission validated: entries of files not looked up are kept
    project.write(
        "third", multimodal=good_lines({q: t + " Updated." for q, t in RESPONSES.items()})
    )
    _validate(project, target)
    assert old in _files(project)
    # every submission validated: every current file was looked up, so the stale entry goes
    _validate(project)
    current = {_sha(p) for p in project.subs.glob("*/*.jsonl")}
    assert set(_files(project)) == current


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


def test_content_hash_never_reads_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "multimodal.jsonl"
    path.write_bytes(b"x" * 1000)
    assert content_hash(path, 1000) == hashlib.sha256(b"x" * 1000).hexdigest()
    assert content_hash(path, 999) is None


def test_errors_only_validation_trusts_a_clean_digest_and_reads_the_rest(project: Project) -> None:
    target = _copycat(project)
    assert COPY in _validate(project)  # every digest computed
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
    # the digest is what decides: one planted as clean and complete stands for the file
    key = _sha(target / "multimodal.jsonl")
    doc = json.loads(_cache_file(project).read_text())
    doc["files"][key] = {**doc["files"][key], "ids": list(RESPONSES), "chars": [1] * 12}
    doc["files"][key]["fingerprints"] = "00" * 8 * len(RESPONSES)
    _cache_file(project).write_text(json.dumps(doc))
    assert pipeline.validate(GamutProject(project.cfg), errors_only=True).ok


def test_fingerprints_are_made_only_once_a_copy_check_asks_for_them(project: Project) -> None:
    target = _copycat(project)
    acme = project.subs / "acme" / "multimodal.jsonl"
    assert pipeline.validate(GamutProject(project.cfg), errors_only=True).ok
    entry = _files(project)[_sha(acme)]  # what the scorer and the errors need, no fingerprints
    assert "fingerprints" not in entry and entry["chars"] == [len(t) for t in RESPONSES.values()]
    assert _validate(project, target) == [COPY]  # the copy check makes them, from the file
    assert len(str(_files(project)[_sha(acme)]["fingerprints"])) == 16 * len(RESPONSES)
    cache = DigestCache(_cache_file(project), Limits())
    digest = cache.of(acme)
    assert digest is not None and digest.fingerprints is not None  # kept, and read back
    assert digest.fingerprints == {q: gaming.fingerprint(t) for q, t in RESPONSES.items()}


def test_metadata_is_kept_by_content_and_reads_back_the_same(tmp_path: Path) -> None:
    cache_file = tmp_path / "digests.json"
    demo = sorted((REPO / "demo" / "submissions").glob("*/submission.yaml"))
    assert demo
    first = DigestCache(cache_file, Limits())
    fresh = [check_metadata(p, "")[0] for p in demo]
    assert [first.metadata(p) for p in demo] == fresh
    first.save(prune=False)
    again = DigestCache(cache_file, Limits())
    assert [again.metadata(p) for p in demo] == fresh  # from the file, validated back
    doc = json.loads(cache_file.read_text())
    assert len(doc["metadata"]) == len({p.read_bytes() for p in demo})


def test_the_duplicate_name_check_reads_other_names_through_the_digests(project: Project) -> None:
    project.write("acme")
    target = project.write("other", multimodal=good_lines(reordered(RESPONSES)))
    assert _validate(project, target) == []
    acme_yaml = project.subs / "acme" / "submission.yaml"
    doc = json.loads(_cache_file(project).read_text())
    key = hashlib.sha256(acme_yaml.read_bytes()).hexdigest()
    mine = yaml.safe_load((target / "submission.yaml").read_text())["model_name"]
    doc["metadata"][key] = {**doc["metadata"][key], "model_name": mine}
    _cache_file(project).write_text(json.dumps(doc))
    report = pipeline.validate(GamutProject(project.cfg), [target])
    assert [p.message for p in report.errors] == [
        f"model_name {mine!r} is already the name of submission 'acme'"
    ]
    # an edited file has another content hash: its own name counts again
    acme_yaml.write_text(acme_yaml.read_text() + "\n")
    assert _validate(project, target) == []


def test_invalid_metadata_is_reported_by_the_scorer_even_when_kept(tmp_path: Path) -> None:
    from gamut.config import load_config
    from scoring.errors import ProblemsError
    from tests.tables.conftest import main_project

    project = GamutProject(load_config(main_project().write(tmp_path)))
    pipeline.score(project)
    meta = tmp_path / "submissions" / "alpha" / "submission.yaml"
    meta.write_text(meta.read_text() + "open_weights: maybe\n")
    for _ in range(2):  # the second time the digest says "no metadata": the check still runs
        with pytest.raises(ProblemsError, match="invalid submission metadata") as err:
            pipeline.score(GamutProject(project.cfg))
        assert err.value.problems and err.value.problems[0].file == str(meta)


def test_one_project_shares_its_cache_and_hashes_a_file_again_only_when_it_changed(
    project: Project,
) -> None:
    target = _copycat(project)
    gp = GamutProject(project.cfg)
    assert DigestCache.open(gp.digests, Limits()) is gp.digests  # validation and scoring share it
    assert DigestCache.open(gp.digests, Limits(max_file_bytes=1 << 20)) is not gp.digests
    assert pipeline.validate(gp, [target]).ok
    acme = project.subs / "acme" / "multimodal.jsonl"
    before = gp.digests.of(acme)
    assert before is not None and _sha(acme) in _files(project)
    # the same cache, after the file changed: its new content is digested, not the old hash's
    acme.write_bytes((target / "multimodal.jsonl").read_bytes())
    after = gp.digests.of(acme)
    assert after is not None and after.fingerprints != before.fingerprints
    assert after.fingerprints == gp.digests.of(target / "multimodal.jsonl").fingerprints


def test_a_pruning_save_is_what_a_later_save_of_the_same_cache_starts_from(
    project: Project,
) -> None:
    target = _copycat(project)
    project.write("third", multimodal=good_lines(reordered(reordered(RESPONSES))))
    gp = GamutProject(project.cfg)
    assert pipeline.validate(gp, [target]).ok
    third = project.subs / "third" / "multimodal.jsonl"
    old = _sha(third)
    assert old in _files(project)
    project.write(
        "third", multimodal=good_lines({q: t + " Updated." for q, t in RESPONSES.items()})
    )
    assert pipeline.validate(gp).ok  # every file looked up: the stale entry is dropped
    assert old not in _files(project)
    gp.digests.save(prune=False)  # as the scorer does after: the dropped entry stays dropped
    assert set(_files(project)) == {_sha(p) for p in project.subs.glob("*/*.jsonl")}
