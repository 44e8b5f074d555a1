"""``gamut questions pull``: the public question set from the (fake) Hub, once, checksummed.

The fake hub on 127.0.0.1 speaks the download protocol; faults are a download cut mid-file
followed by an outage, bytes that differ from the listed hashes, and a revision that does not
exist. Commands that read the questions say how to fill an empty cache.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from huggingface_hub.constants import DOWNLOAD_CHUNK_SIZE

from gamut.cli import main
from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub

IMAGE_BYTES = 300_000
#: The client keeps what it received in whole chunks; one image spans more than one.
CHUNK = DOWNLOAD_CHUNK_SIZE
BIG = "images/food-0002.jpg"


def _question(qid: str) -> dict[str, object]:
    return {
        "question_id": qid,
        "image_id": qid,
        "image": f"images/{qid}.jpg",
        "domain": "food",
        "popularity": "head",
        "egocentric": False,
        "question": "What is this dish?",
        "text_only_question": f"What is dish {qid}?",
    }


QIDS = ["food-0001", "food-0002", "food-0003"]


def question_files() -> dict[str, bytes]:
    """A public question set: the questions file and one image per question."""
    rng = random.Random(7)
    files = {
        "questions.jsonl": "".join(json.dumps(_question(q)) + "\n" for q in QIDS).encode(),
        "README.md": b"# public GAMUT questions\n",
    }
    for q in QIDS:
        files[f"images/{q}.jpg"] = rng.randbytes(IMAGE_BYTES)
    files[BIG] = rng.randbytes(CHUNK + IMAGE_BYTES)
    return files


SHA = commit_sha(question_files())


@pytest.fixture
def qhub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    repo = FakeRepo(commits={SHA: question_files()}, branches={"main": SHA}, private=False)
    with serve_hub(FakeHub(repos={"gamut/questions": repo}, token="unused")) as h:
        monkeypatch.setenv("GAMUT_HF_ENDPOINT", h.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield h


def _config(root: Path, revision: str = SHA) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gamut.toml").write_text(
        f"""
[benchmark]
questions = "hf://datasets/gamut/questions@{revision}"
rubrics = "rubrics"
submissions = "submissions"
""",
        encoding="utf-8",
    )
    return root / "gamut.toml"


def _gamut(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _cached(root: Path) -> Path:
    return root / ".gamut" / "questions" / "gamut--questions" / SHA


def test_pull_downloads_verifies_and_is_done_once(qhub: FakeHub, tmp_path: Path) -> None:
    cfg = str(_config(tmp_path / "p"))
    r = _gamut("questions", "pull", "--config", cfg)
    assert r.exit_code == 0, r.output
    assert "5 file(s)" in r.output and "downloaded and verified" in r.output
    folder = _cached(tmp_path / "p")
    for name, data in question_files().items():
        assert (folder / name).read_bytes() == data
    manifest = json.loads((folder / "gamut-manifest.json").read_text())
    assert manifest["revision"] == SHA and manifest["questions"] == 3
    assert "sha256" in manifest["files"]["images/food-0001.jpg"]
    assert "git-sha1" in manifest["files"]["questions.jsonl"]

    qhub.requests.clear()
    again = _gamut("questions", "pull", "--config", cfg)
    assert again.exit_code == 0 and "already in the cache" in again.output
    assert qhub.requests == [], "a complete copy is never fetched again"

    out = tmp_path / "q.jsonl"
    exported = _gamut("questions", "export", "--setting", "multimodal", "--out", str(out),
                      "--config", cfg)  # fmt: skip
    assert exported.exit_code == 0, exported.output
    first = json.loads(out.read_text().splitlines()[0])
    assert first["image"] == (folder / "images" / "food-0001.jpg").resolve().as_posix()
    assert qhub.requests == [], "export reads the cache only"


def test_commands_name_the_pull_command_while_the_cache_is_empty(
    qhub: FakeHub, tmp_path: Path
) -> None:
    cfg = str(_config(tmp_path / "p"))
    for args in (
        ["questions", "export", "--setting", "multimodal", "--out", str(tmp_path / "q.jsonl")],
        ["submission", "validate"],
        ["generate", "--submission", "acme-1", "--model", "m"],
    ):
        r = _gamut(*args, "--config", cfg)
        assert r.exit_code == 1, (args, r.output)
        assert "gamut questions pull" in r.output and "not in the local cache" in r.output, args
        assert "Traceback" not in r.output
    assert qhub.requests == [], "only `questions pull` goes to the Hub"


def test_a_dropped_connection_resumes_where_it_stopped(qhub: FakeHub, tmp_path: Path) -> None:
    cfg = str(_config(tmp_path / "p"))
    qhub.cut = {BIG: CHUNK + 1000}
    r = _gamut("questions", "pull", "--config", cfg)
    assert r.exit_code == 0, r.output
    ranges = [q.range for q in qhub.requests if q.path.endswith(BIG) and q.range]
    assert ranges == [f"bytes={CHUNK}-"], "only the missing bytes are asked for again"
    image = _cached(tmp_path / "p") / BIG
    assert image.read_bytes() == question_files()[BIG]


def test_an_interrupted_pull_keeps_what_it_finished(qhub: FakeHub, tmp_path: Path) -> None:
    cfg = str(_config(tmp_path / "p"))
    qhub.cut = {BIG: 1000}
    qhub.outage_after_cut = True
    first = _gamut("questions", "pull", "--config", cfg)
    assert first.exit_code == 1
    text = " ".join(first.output.split())
    assert "public questions:" in text and "Traceback" not in text, text
    folder = _cached(tmp_path / "p")
    assert not (folder / "gamut-manifest.json").exists(), "an incomplete copy is never used"
    done = {n for n in question_files() if (folder / n).is_file()}
    assert BIG not in done and len(done) >= 1
    export = _gamut("questions", "export", "--setting", "multimodal", "--out",
                    str(tmp_path / "q.jsonl"), "--config", cfg)  # fmt: skip
    assert export.exit_code == 1 and "gamut questions pull" in export.output

    qhub.unavailable.clear()
    qhub.requests.clear()
    second = _gamut("questions", "pull", "--config", cfg)
    assert second.exit_code == 0, second.output
    fetched = {q.path.split(f"/resolve/{SHA}/", 1)[1] for q in qhub.requests
               if q.method == "GET" and "/resolve/" in q.path}  # fmt: skip
    assert BIG in fetched and not fetched & done
    for name, data in question_files().items():
        assert (folder / name).read_bytes() == data
    assert (folder / "gamut-manifest.json").is_file()


def test_bytes_that_fail_the_checksum_are_removed_and_named(qhub: FakeHub, tmp_path: Path) -> None:
    cfg = str(_config(tmp_path / "p"))
    real = question_files()["images/food-0003.jpg"]
    qhub.corrupt = {"images/food-0003.jpg": bytes(b ^ 1 for b in real[:10]) + real[10:]}
    r = _gamut("questions", "pull", "--config", cfg)
    assert r.exit_code == 1
    text = " ".join(r.output.split())
    assert "do not match the Hub's checksums" in text and "images/food-0003.jpg" in text
    folder = _cached(tmp_path / "p")
    assert not (folder / "images/food-0003.jpg").exists()
    assert not (folder / "gamut-manifest.json").exists()

    qhub.corrupt.clear()
    fixed = _gamut("questions", "pull", "--config", cfg)
    assert fixed.exit_code == 0, fixed.output
    assert (folder / "images/food-0003.jpg").read_bytes() == real


def test_a_wrong_revision_is_named(qhub: FakeHub, tmp_path: Path) -> None:
    wrong = "0" * 40
    r = _gamut("questions", "pull", "--config", str(_config(tmp_path / "p", wrong)))
    assert r.exit_code == 1
    assert "no revision gamut/questions@000000000000" in r.output
    assert "check the commit sha in benchmark.questions" in " ".join(r.output.split())
    branch = _gamut("questions", "pull", "--config", str(_config(tmp_path / "b", "main")))
    assert branch.exit_code == 1 and "not a full commit sha" in branch.output


def test_the_live_config_names_the_placeholder_and_the_fix(tmp_path: Path) -> None:
    live = Path(__file__).resolve().parents[2] / "gamut.toml"
    for args in (
        ["questions", "pull"],
        ["questions", "export", "--setting", "multimodal", "--out", str(tmp_path / "q.jsonl")],
        ["submission", "validate"],
        ["judge", "--dry-run"],
    ):
        r = _gamut(*args, "--config", str(live))
        text = " ".join(r.output.split())
        assert r.exit_code == 1, (args, r.output)
        assert "submissions are not open yet: the GAMUT question set" in text, (args, text)
        assert "is the placeholder UNPUBLISHED" in text  # and, for maintainers, the fix
        assert "--config demo/gamut.toml" in text and "commit sha" in text
    copy = tmp_path / "live" / "gamut.toml"  # its submissions folder beside it, not the repo's
    copy.parent.mkdir()
    copy.write_text(live.read_text())
    r = _gamut("submission", "new", "my-model", "--config", str(copy))
    assert r.exit_code == 0, r.output
    assert "Submissions are not open yet" in " ".join(r.output.split())


def test_a_local_questions_file_needs_no_pull() -> None:
    demo = Path(__file__).resolve().parents[2] / "demo" / "gamut.toml"
    r = _gamut("questions", "pull", "--config", str(demo))
    assert r.exit_code == 0 and "nothing to pull" in r.output
    assert "demo/questions.jsonl" in r.output
