"""CSV formula injection: every CSV the project writes neutralises cells a spreadsheet would run,
through one shared writer; and published files are world-readable."""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.csvcells import (
    FORMULA_START,
    neutralise,
    neutralise_frame,
    neutralise_table,
    table_text_csv,
    write_table_csv,
)
from tests.tables.conftest import main_project

REPO = Path(__file__).resolve().parents[2]
HOSTILE = ['=HYPERLINK("http://evil.example","click")', "@SUM(1+1)", "+1+1", "-2+3", "\t=1", "\r=1"]


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_cells_get_an_apostrophe(text: str) -> None:
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("text", ["plain", "", "a=b", " =1", "'=1", "Evil & <Co>", "1.5"])
def test_other_cells_are_unchanged(text: str) -> None:
    assert neutralise(text) == text


@given(st.text(max_size=20))
def test_no_neutralised_cell_starts_a_formula(text: str) -> None:
    out = neutralise(text)
    assert not out.startswith(FORMULA_START)
    assert out.removeprefix("'") == text or out == text


def test_frames_keep_numbers_and_fix_text_and_categories() -> None:
    df = pd.DataFrame(
        {
            "name": ["=cmd()", "ok", None],
            "score": [-1.5, 2.0, 3.0],
            "cat": pd.Categorical(["@x", "y", "@x"]),
            "dup": pd.Categorical(["=a", "'=a", "b"]),  # renaming would collide
        }
    )
    out = neutralise_frame(df)
    assert list(out["name"][:2]) == ["'=cmd()", "ok"] and pd.isna(out["name"][2])
    assert list(out["score"]) == [-1.5, 2.0, 3.0]
    assert list(out["cat"].astype(str)) == ["'@x", "y", "'@x"]
    assert list(out["dup"].astype(str)) == ["'=a", "'=a", "b"]
    assert list(df["name"][:2]) == ["=cmd()", "ok"]  # the input is not changed
    rows = list(
        csv.reader(io.StringIO(table_text_csv(pa.Table.from_pandas(df, preserve_index=False))))
    )
    assert rows[1][:2] == ["'=cmd()", "-1.5"]


def test_arrow_tables_fix_plain_and_dictionary_columns() -> None:
    table = pa.table(
        {
            "a": ["=1+1", "ok", None],
            "large": pa.array(["@x", "y", None], pa.large_string()),
            "d": pa.array(["-x", "y", "-x"]).dictionary_encode(),
            "n": [-1, 2, 3],
        }
    )
    out = neutralise_table(table)
    assert out.column("a").to_pylist() == ["'=1+1", "ok", None]
    assert out.column("d").to_pylist() == ["'-x", "y", "'-x"]
    assert out.column("n").to_pylist() == [-1, 2, 3]
    assert out.column("large").to_pylist() == ["'@x", "y", None]
    sink = pa.BufferOutputStream()
    write_table_csv(table, sink)
    rows = list(csv.reader(io.StringIO(sink.getvalue().to_pybytes().decode())))
    assert rows[1] == ["'=1+1", "'@x", "'-x", "-1"]


def test_every_csv_writer_goes_through_the_shared_helper() -> None:
    """No module but scoring/csvcells.py writes CSV itself."""
    writers = re.compile(r"\.to_csv\(|\bwrite_csv\(|csv\.writer\(|csv\.DictWriter\(")
    offenders = []
    for package in ("scoring", "generator", "gamut", "workbench"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name == "csvcells.py":
                continue
            if writers.search(path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"write CSV with scoring.csvcells instead: {offenders}"


@pytest.fixture
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_score_tables_neutralise_metadata_and_are_world_readable(
    tmp_path: Path, usual_umask: None
) -> None:
    config = main_project().write(tmp_path)
    meta_file = tmp_path / "submissions" / "alpha" / "submission.yaml"
    meta = yaml.safe_load(meta_file.read_text())
    meta["model_name"], meta["organisation"] = HOSTILE[0], HOSTILE[1]
    meta_file.write_text(yaml.safe_dump(meta))
    out = pipeline.score(Project(load_config(config))).out_dir
    rows = list(csv.DictReader((out / "leaderboard.csv").open(encoding="utf-8")))
    alpha = [r for r in rows if r["submission_id"] == "alpha"]
    assert alpha and {r["model_name"] for r in alpha} == {"'" + HOSTILE[0]}
    assert {r["organisation"] for r in alpha} == {"'" + HOSTILE[1]}
    for r in rows:
        for value in r.values():
            assert not value.startswith(("=", "@", "+")), value
    # Parquet and JSON keep the value as submitted
    lb = pd.read_parquet(out / "leaderboard.parquet")
    assert HOSTILE[0] in set(lb["model_name"])
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o044 == 0o044, f"{path} is {oct(mode)}"


_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1e-7, 1e16, 0.1, 2.5, 1 / 3]
)
_TEXT = (
    st.none()
    | st.sampled_from(["", "a,b", 'say "hi"', "two\nlines", " x ", "=1", "-2"])
    | (st.text(max_size=8))
)


@st.composite
def _frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 6))
    cols = {
        "f": pd.Series(draw(st.lists(_FLOATS, min_size=n, max_size=n)), dtype="float64"),
        "i": pd.Series(draw(st.lists(st.integers(-(2**62), 2**62), min_size=n, max_size=n))),
        "ni": pd.array(
            draw(st.lists(st.none() | st.integers(-9, 9), min_size=n, max_size=n)), "Int64"
        ),
        "b": pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        "s": pd.Series(draw(st.lists(_TEXT, min_size=n, max_size=n)), dtype=object),
        "c": pd.Categorical(
            draw(st.lists(st.none() | st.sampled_from(["@x", "y", "z,1"]), min_size=n, max_size=n))
        ),
    }
    return pd.DataFrame(cols)


@given(_frames())
def test_the_score_tables_csv_is_what_pandas_writes(df: pd.DataFrame) -> None:
    # the score tables' CSV goes through the standard library's writer: it must be the text
    # pandas writes for the same (neutralised) frame, byte for byte
    assert table_text_csv(pa.Table.from_pandas(df, preserve_index=False)) == neutralise_frame(
        df
    ).to_csv(index=False, lineterminator="\n")
