"""gamut.toml: every problem reported at once; relative paths against the file's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamut.config import load_config
from scoring.errors import ProblemsError

REPO = Path(__file__).parents[2]

GOOD = """
[benchmark]
questions = "q.jsonl"
rubrics = "rubrics"

[judges.a]
provider = "openai"
model = "m"
family = "fam"
primary = true
"""


def test_demo_config_loads_and_writes_at_the_repository_root() -> None:
    cfg = load_config(REPO / "demo" / "gamut.toml")
    assert cfg.primary_judge == "oracle"
    assert cfg.path(cfg.benchmark.questions) == REPO / "demo" / "questions.jsonl"
    assert cfg.path(cfg.benchmark.submissions) == REPO / "demo" / "submissions"
    for out, name in ((cfg.site.out, "site"), (cfg.store.results, "results")):
        assert cfg.path(out).resolve() == REPO / name
    assert cfg.path(cfg.store.cache).resolve() == REPO / ".gamut" / "verdicts.sqlite"
    for key, value in cfg.store.model_dump().items():  # every store path, present and future
        if isinstance(value, Path):
            where = cfg.path(value).resolve()
            assert where.parent in {REPO, REPO / ".gamut"}, f"store.{key} = {value} -> {where}"


def test_relative_paths_and_defaults(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text(GOOD)
    cfg = load_config(tmp_path / "g.toml")
    assert cfg.path(cfg.store.results) == tmp_path / "results"
    assert cfg.scoring.partial_credit == 0.5 and cfg.scoring.contradiction_penalty == -2.0


def test_all_problems_at_once(tmp_path: Path) -> None:
    bad = (
        GOOD.replace('rubrics = "rubrics"', 'rubrics = "rubrics"\nrubric_public = true')
        + """
[judges.b]
provider = "openai"
model = "m2"
family = "fam2"
primary = true

[scoring]
partial_credit = 2
"""
    )
    (tmp_path / "g.toml").write_text(bad)
    with pytest.raises(ProblemsError) as info:
        load_config(tmp_path / "g.toml")
    msg = str(info.value)
    assert "benchmark.rubric_public: Extra inputs are not permitted (remove the key" in msg
    assert "scoring.partial_credit: Input should be less than 1" in msg
    assert "exactly one judge must have primary = true (found: a, b)" in msg
    assert len(info.value.problems) == 3


def test_two_primaries(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text(
        GOOD + '\n[judges.b]\nprovider = "openai"\nmodel = "x"\nfamily = "f"\nprimary = true\n'
    )
    with pytest.raises(
        ProblemsError, match=r"exactly one judge must have primary = true \(found: a, b\)"
    ):
        load_config(tmp_path / "g.toml")


def test_missing_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ProblemsError, match="config file not found"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "g.toml").write_text("[benchmark\n")
    with pytest.raises(ProblemsError, match="not valid TOML"):
        load_config(tmp_path / "g.toml")
