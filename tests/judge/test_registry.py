"""The backend registry is the list of providers: a registered backend works end to end from the
config, and an unregistered name is refused with the registered ones named."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gamut import pipeline
from gamut.cli.generate import generate_cmd
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError, ProblemsError
from scoring.judge import providers
from scoring.judge.progress import NullProgress
from scoring.judge.providers import ProviderEntry
from tests.judge.project import TOTAL_CHECKS, write_project

JUDGE = '[judges.kw]\nprovider = "keyword"\nmodel = "words-v1"\nfamily = "none"\nprimary = true\n'


@pytest.fixture
def keyword_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = ProviderEntry("tests.judge.keyword_backend", "KeywordBackend", needs_key=False)
    monkeypatch.setitem(providers.PROVIDERS, "keyword", entry)


def test_a_registered_backend_judges_from_the_config(tmp_path: Path, keyword_backend: None) -> None:
    assert "keyword" in providers.names()
    project = Project(load_config(write_project(tmp_path, JUDGE)))
    report = pipeline.judge(project, progress=NullProgress())
    assert report.ok and not report.failures
    df = pd.read_parquet(pipeline.write_verdicts(project))
    assert len(df) == TOTAL_CHECKS
    assert set(df["verdict"].astype(str)) <= {"meets", "missing"}
    assert (df["verdict"] == "meets").any() and (df["verdict"] == "missing").any()


def test_an_unregistered_provider_is_refused_with_the_registered_names(tmp_path: Path) -> None:
    with pytest.raises(ProblemsError) as err:
        load_config(write_project(tmp_path, JUDGE))
    text = str(err.value)
    assert "judges.kw.provider" in text and "unknown provider 'keyword'" in text
    assert all(name in text for name in ("openai", "anthropic", "replay"))


def test_one_module_per_provider_serves_judging_and_generation() -> None:
    """``gamut generate``'s providers are the registry's, from the judge's provider modules."""
    choice = next(p for p in generate_cmd.params if p.name == "provider")
    assert tuple(choice.type.choices) == providers.generators() == ("openai", "anthropic")  # type: ignore[attr-defined]
    for name in providers.generators():
        generator, backend = providers.generator_class(name), providers.backend_class(name)
        assert generator.__module__ == backend.__module__ == providers.entry(name).module
    with pytest.raises(GamutError, match="'replay' serves no generation"):
        providers.generator_class("replay")
