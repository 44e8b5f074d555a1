"""Held rubrics fetched from the (fake) Hub by the real ``snapshot_download``."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamut.config import load_config
from gamut.hub import parse_hub_uri
from gamut.project import Project
from scoring.errors import GamutError
from scoring.rubric_io import load_rubrics
from tests.hub.conftest import TOKEN, write_config
from tests.hub.fake_hub import FakeHub

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, hub: FakeHub) -> FakeHub:
    monkeypatch.setenv("GAMUT_HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return hub


def test_parse_pins_a_commit_and_keeps_the_folder() -> None:
    ref = parse_hub_uri(f"hf://datasets/gamut/held@{SHA}/rubrics/v2")
    assert (ref.repo_id, ref.revision, ref.subfolder) == ("gamut/held", SHA, "rubrics/v2")
    assert ref.allow_patterns == ["rubrics/v2/*.json", "rubrics/v2/*.jsonl"]
    assert parse_hub_uri(f"hf://datasets/gamut/held@{SHA}").allow_patterns == ["*.json", "*.jsonl"]


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("hf://datasets/gamut/held@main", "full commit sha"),
        (f"hf://datasets/gamut/held@{SHA[:12]}", "full commit sha"),
        (f"hf://models/gamut/held@{SHA}", "not a Hub reference"),
        ("hf://datasets/gamut@" + SHA, "not a Hub reference"),
        (f"hf://datasets/gamut/held@{SHA}/../x", "plain relative path"),
    ],
)
def test_parse_rejects_unpinned_or_malformed(uri: str, words: str) -> None:
    with pytest.raises(GamutError, match=words):
        parse_hub_uri(uri)


def test_local_path_is_resolved_against_the_config(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, "rubrics"))
    assert Project(cfg).rubrics_path == tmp_path / "rubrics"


def test_downloads_only_rubric_files_at_the_commit(
    tmp_path: Path, env: FakeHub, held_sha: str
) -> None:
    cfg = load_config(write_config(tmp_path, f"hf://datasets/gamut/held-rubrics@{held_sha}"))
    path = Project(cfg).rubrics_path
    private = (tmp_path / ".gamut" / "private").resolve()
    assert private in path.resolve().parents
    got = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    assert got == ["rubrics/food-0001.json", "rubrics/more/food-0002.jsonl"]
    assert sorted(load_rubrics([path])) == ["food-0001", "food-0002"]
    fetched = [r.path for r in env.requests if r.method == "GET" and "/resolve/" in r.path]
    assert all(p.endswith((".json", ".jsonl")) for p in fetched) and len(fetched) == 2
    assert all(held_sha in r.path for r in env.requests)
    assert {r.authorization for r in env.requests} == {f"Bearer {TOKEN}"}


def test_second_call_is_served_from_the_cache(tmp_path: Path, env: FakeHub, held_sha: str) -> None:
    cfg = load_config(write_config(tmp_path, f"hf://datasets/gamut/held-rubrics@{held_sha}"))
    first = Project(cfg).rubrics_path
    seen = len(env.requests)
    assert Project(cfg).rubrics_path == first
    assert len(env.requests) == seen


def test_subfolder_limits_the_download(tmp_path: Path, env: FakeHub, held_sha: str) -> None:
    uri = f"hf://datasets/gamut/held-rubrics@{held_sha}/rubrics/more"
    path = Project(load_config(write_config(tmp_path, uri))).rubrics_path
    assert path.name == "more"
    assert sorted(load_rubrics([path])) == ["food-0002"]


def test_missing_token_is_refused_with_a_fix(
    tmp_path: Path, env: FakeHub, held_sha: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    cfg = load_config(write_config(tmp_path, f"hf://datasets/gamut/held-rubrics@{held_sha}"))
    with pytest.raises(GamutError, match="HF_TOKEN") as exc:
        _ = Project(cfg).rubrics_path
    assert any(r.authorization is None for r in env.requests)
    assert not (tmp_path / ".gamut" / "private").exists() or not list(
        (tmp_path / ".gamut" / "private").rglob("*.json")
    )
    assert TOKEN not in str(exc.value)


def test_wrong_token_is_refused_and_never_echoed(
    tmp_path: Path, env: FakeHub, held_sha: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_value")
    cfg = load_config(write_config(tmp_path, f"hf://datasets/gamut/held-rubrics@{held_sha}"))
    with pytest.raises(GamutError) as exc:
        _ = Project(cfg).rubrics_path
    assert "hf_wrong_value" not in str(exc.value)
    assert "401" in str(exc.value) or "not accessible" in str(exc.value)


def test_unknown_repo_and_revision_are_404(tmp_path: Path, env: FakeHub, held_sha: str) -> None:
    cfg = load_config(write_config(tmp_path / "a", f"hf://datasets/gamut/nope@{held_sha}"))
    with pytest.raises(GamutError, match="not found or not accessible"):
        _ = Project(cfg).rubrics_path
    cfg = load_config(write_config(tmp_path / "b", f"hf://datasets/gamut/held-rubrics@{SHA}"))
    with pytest.raises(GamutError, match="check the commit sha"):
        _ = Project(cfg).rubrics_path


def test_private_cache_inside_results_is_refused(tmp_path: Path, held_sha: str) -> None:
    uri = f"hf://datasets/gamut/held-rubrics@{held_sha}"
    cfg = load_config(write_config(tmp_path, uri, extra='[store]\nprivate = "results/held"\n'))
    with pytest.raises(GamutError, match=r"inside store\.results"):
        _ = Project(cfg).rubrics_path


def test_unreachable_hub_uses_the_pinned_cache(
    tmp_path: Path, env: FakeHub, held_sha: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_config(write_config(tmp_path, f"hf://datasets/gamut/held-rubrics@{held_sha}"))
    first = Project(cfg).rubrics_path
    monkeypatch.setenv("GAMUT_HF_ENDPOINT", "http://127.0.0.1:9")
    assert Project(cfg).rubrics_path == first
