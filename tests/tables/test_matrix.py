"""The verdict matrix read from a streamed verdict table: same matrix as a row-by-row reading."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scoring.errors import GamutError
from scoring.tables import matrix as matrix_module
from scoring.tables.matrix import KEY_COLUMNS, MISSING, SETTINGS, read_verdicts
from scoring.verdicts import VERDICT_ORDER

SUBMISSIONS = ("acme", "beta", "gamma")
JUDGES = ("primary", "second")
QUESTIONS = [f"q-{i}" for i in range(6)]
CHECKS = [[f"{q}-c{j}" for j in range(2 + i % 3)] for i, q in enumerate(QUESTIONS)]


def _rows(rng: random.Random) -> list[dict[str, str]]:
    """Every expected verdict once, in random order, plus stale rows that match nothing."""
    rows = [
        {
            "submission_id": s,
            "setting": setting.value,
            "judge": j,
            "question_id": q,
            "check_id": c,
            "verdict": rng.choice(VERDICT_ORDER).value,
        }
        for s in SUBMISSIONS
        for setting in SETTINGS
        for j in JUDGES
        for q, ids in zip(QUESTIONS, CHECKS, strict=True)
        for c in ids
        if rng.random() < 0.9  # some checks have no verdict
    ]
    stale = dict(rows[0])
    rows += [
        {**stale, "submission_id": "withdrawn"},
        {**stale, "judge": "retired"},
        {**stale, "check_id": "q-0-c99"},
        {**stale, "question_id": "q-gone"},
    ]
    rng.shuffle(rows)
    return rows


def _write(path: Path, rows: list[dict[str, str]], groups: int) -> None:
    """Write ``rows`` in ``groups`` row groups, each with its own dictionaries."""
    schema = pa.schema([(c, pa.dictionary(pa.int32(), pa.string())) for c in KEY_COLUMNS])
    size = -(-len(rows) // groups)
    with pq.ParquetWriter(path, schema) as w:
        for start in range(0, len(rows), size):
            part = rows[start : start + size]
            cols = {c: pa.array([r[c] for r in part]).dictionary_encode() for c in KEY_COLUMNS}
            cols = {c: a.cast(schema.field(c).type) for c, a in cols.items()}
            w.write_table(pa.table(cols, schema=schema))


def _expected(rows: list[dict[str, str]]) -> tuple[np.ndarray, int]:
    """The matrix built one row at a time, the plain way."""
    col = {
        (q, c): k
        for k, (q, c) in enumerate(
            (q, c) for q, ids in zip(QUESTIONS, CHECKS, strict=True) for c in ids
        )
    }
    code = {v.value: i for i, v in enumerate(VERDICT_ORDER)}
    settings = [s.value for s in SETTINGS]
    m = np.full((len(SUBMISSIONS) * 2 * len(JUDGES), len(col)), MISSING, np.int8)
    stale = 0
    for r in rows:
        k = col.get((r["question_id"], r["check_id"]))
        if r["submission_id"] not in SUBMISSIONS or r["judge"] not in JUDGES or k is None:
            stale += 1
            continue
        s, j = SUBMISSIONS.index(r["submission_id"]), JUDGES.index(r["judge"])
        g = (s * 2 + settings.index(r["setting"])) * len(JUDGES) + j
        m[g, k] = code[r["verdict"]]
    return m, stale


@pytest.fixture(params=["one batch", "batches of 5"])
def batch_rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table decoded in one batch, or in many small ones (the lookup tables kept from one
    batch to the next)."""
    if request.param == "batches of 5":
        monkeypatch.setattr(matrix_module, "BATCH_ROWS", 5)


@pytest.mark.parametrize("groups", [1, 7])
@pytest.mark.usefixtures("batch_rows")
def test_streamed_matrix_equals_the_row_by_row_one(tmp_path: Path, groups: int) -> None:
    rows = _rows(random.Random(groups))
    path = tmp_path / "verdicts.parquet"
    _write(path, rows, groups)
    assert pq.ParquetFile(path).metadata.num_row_groups == groups
    matrix, stale = read_verdicts(path, SUBMISSIONS, JUDGES, QUESTIONS, CHECKS)
    want, want_stale = _expected(rows)
    assert stale == want_stale == 4
    np.testing.assert_array_equal(matrix, want)


@pytest.mark.usefixtures("batch_rows")
def test_an_unknown_verdict_in_a_later_row_group_is_refused(tmp_path: Path) -> None:
    rows = _rows(random.Random(0))
    rows[-1]["verdict"] = "excellent"
    path = tmp_path / "verdicts.parquet"
    _write(path, rows, 5)
    with pytest.raises(GamutError, match=r"unknown verdict value\(s\) \['excellent'\]"):
        read_verdicts(path, SUBMISSIONS, JUDGES, QUESTIONS, CHECKS)


@pytest.mark.usefixtures("batch_rows")
def test_two_verdicts_for_one_check_are_refused(tmp_path: Path) -> None:
    rows = _rows(random.Random(0))
    path = tmp_path / "verdicts.parquet"
    expected = next(
        r for r in rows if r["submission_id"] in SUBMISSIONS and r["judge"] in JUDGES
        and r["question_id"] in QUESTIONS and not r["check_id"].endswith("c99")
    )  # fmt: skip
    _write(path, [*rows, expected], 3)
    with pytest.raises(GamutError, match="more than one verdict row"):
        read_verdicts(path, SUBMISSIONS, JUDGES, QUESTIONS, CHECKS)


def test_a_table_without_a_key_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.parquet"
    pq.write_table(pa.table({"submission_id": ["acme"], "verdict": ["meets"]}), path)
    with pytest.raises(GamutError, match=r"no column\(s\) setting, judge, question_id, check_id"):
        read_verdicts(path, SUBMISSIONS, JUDGES, QUESTIONS, CHECKS)


def test_a_truncated_table_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.parquet"
    _write(path, _rows(random.Random(0)), 3)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GamutError, match=r"cannot read the verdict table .*`gamut judge`"):
        read_verdicts(path, SUBMISSIONS, JUDGES, QUESTIONS, CHECKS)
