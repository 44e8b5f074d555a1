"""Fixtures for the site tests: fixture score tables, built sites and their text."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from gamut import pipeline
from gamut.config import GamutConfig, load_config
from gamut.project import Project
from generator.vendor import PLOTLY
from scoring.rubric_io import compile_all, load_rubrics
from tests.generator.fixture_tables import publish_fixture_site_data, write_fixture_config

REPO = Path(__file__).resolve().parents[2]
DEMO_RUBRICS = REPO / "demo" / "rubrics"
_NOT_CONTENT = {
    "question_id",
    "id",
    "type",
    "tier",
    "cites",
    "required",
    "baselines",
    "coverage_thresholds",
}


def rubric_strings(folder: Path = DEMO_RUBRICS) -> set[str]:
    """Every piece of rubric content: item text, topics, members, steps, aspects, entities,
    insights, snippets (text, title, url) and every compiled check text."""
    out: set[str] = set()

    def walk(node: object, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key not in _NOT_CONTENT:
            out.add(node)

    for path in sorted(folder.glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    for checks in compile_all(load_rubrics([folder])).values():
        out.update(c.text for c in checks)
    return out


def found_in(strings: set[str], text: str) -> list[str]:
    """The strings that occur in ``text`` as whole words."""
    return [x for x in strings if x in text and re.search(rf"(?<!\w){re.escape(x)}(?!\w)", text)]


def held_strings(public_inputs: tuple[Path, ...] = ()) -> tuple[set[str], set[str]]:
    """Rubric content to search a held build for: (every string, the distinctive ones).

    Strings that the hand-written pages or templates contain anyway (the submitter's guide
    quotes a demo answer) are not data and are left out, and so are strings that the public
    inputs hold (a model's response naming "the giant panda" publishes the response, not the
    rubric). Single short words ("file", "egg") occur in any prose, so only distinctive strings
    (several words, or 8+ characters) are searched in pages; every string is searched in the
    data files.
    """
    secrets = rubric_strings()
    static = "\n".join(p.read_text(encoding="utf-8") for p in
                       [*(REPO / "site_src").glob("*.md"),
                        *(REPO / "generator" / "templates").glob("*"), *public_inputs])  # fmt: skip
    secrets -= set(found_in(secrets, static))
    return secrets, {x for x in secrets if " " in x.strip() or len(x) >= 8}


def assert_no_rubric_text(site: Path, public_inputs: tuple[Path, ...] = ()) -> int:
    """Fail if any rubric content reaches a published file; returns the files searched.

    Args:
        site: the built site.
        public_inputs: the questions and response files the site was built from; rubric
            strings that occur in them are public already and not searched for.
    """
    secrets, distinctive = held_strings(public_inputs)
    assert len(distinctive) > 200
    checked = 0
    for path, text in site_texts(site):
        checked += 1
        data = path.suffix in {".csv", ".gz", ".parquet"} or path.parent.name == "downloads"
        leaks = found_in(secrets if data else distinctive, text)
        assert not leaks, f"{path} holds rubric text: {leaks[:3]}"
        assert "check_text" not in text, path
        assert not data or "rationale" not in text, path
    return checked


def assert_no_check_text(site: Path, public_inputs: tuple[Path, ...] = ()) -> int:
    """Fail if any compiled check text reaches a published file, every one searched in every
    file (short words included); returns the number of check texts searched for. Texts that
    the public inputs hold (the demo's synthetic responses quote some facts) are left out."""
    texts = {c.text for cs in compile_all(load_rubrics([DEMO_RUBRICS])).values() for c in cs}
    public = "\n".join(p.read_text(encoding="utf-8") for p in public_inputs)
    texts -= set(found_in(texts, public))
    for path, text in site_texts(site):
        leaks = found_in(texts, text)
        assert not leaks, f"{path} holds check text: {leaks[:3]}"
    return len(texts)


def inject_rubric_text(results: Path, folder: Path = DEMO_RUBRICS) -> list[str]:
    """Put real check texts and rationales quoting members into the fixture verdict table, as a
    verdict table written with public rubrics would hold them."""
    checks = [c for cs in compile_all(load_rubrics([folder])).values() for c in cs]
    path = results / "verdicts.parquet"
    df = pd.read_parquet(path)
    texts = list(itertools.islice(itertools.cycle(c.text for c in checks), len(df)))
    df["check_text"] = texts
    df["rationale"] = [f"The response covers: {t}" for t in texts]
    df.to_parquet(path)
    return sorted({c.text for c in checks})


def site_texts(site: Path) -> Iterator[tuple[Path, str]]:
    """The text of every file we publish (theme and plotly assets excluded), decompressed."""
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.parent.name in {
            "javascripts",
            "stylesheets",
            "lunr",
            "min",
            "workers",
            "images",
        }:
            continue
        if path.name == PLOTLY.asset:
            continue
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            buf = io.StringIO()
            table.to_pandas().to_csv(buf)
            yield path, buf.getvalue() + json.dumps(str(table.schema.metadata))
        elif path.suffix == ".gz":
            yield path, gzip.decompress(path.read_bytes()).decode("utf-8")
        elif path.suffix in {".png", ".ico", ".svg"}:
            continue
        else:
            yield path, path.read_bytes().decode("utf-8", errors="replace")


def _build(root: Path, public: bool) -> tuple[GamutConfig, Path]:

    path = write_fixture_config(root, rubrics_public=public)
    cfg = load_config(path)
    inject_rubric_text(cfg.path(cfg.store.results))
    publish_fixture_site_data(path)  # the build links it
    return cfg, pipeline.build_site(Project(cfg))


@pytest.fixture(scope="module")
def held_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[GamutConfig, Path]:
    """A site built from the fixture tables with rubrics held."""
    return _build(tmp_path_factory.mktemp("held"), public=False)


@pytest.fixture(scope="module")
def public_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[GamutConfig, Path]:
    """A site built from the fixture tables with public rubrics."""
    return _build(tmp_path_factory.mktemp("public"), public=True)


def read_data_script(path: Path) -> Any:
    """The JSON value a page data script (``window.gamut.put(document.currentScript.src,{...});``)
    hands to the page."""
    text = path.read_text(encoding="utf-8")
    head, tail = "window.gamut.put(document.currentScript.src,", ");\n"
    assert text.startswith(head) and text.endswith(tail), f"{path}: not a data script"
    return json.loads(text[len(head) : -len(tail)])
