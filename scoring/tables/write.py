"""Writing the score tables: Parquet (with the provenance as file metadata), CSV and JSON,
atomically and deterministically (``generated_at`` honours ``SOURCE_DATE_EPOCH``)."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from collections.abc import Iterable, Set
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scoring import __version__
from scoring.csvcells import table_text_csv
from scoring.layout import PROVENANCE_FILE as PROVENANCE_FILE
from scoring.layout import PROVENANCE_KEY as PROVENANCE_KEY
from scoring.layout import ResultsLayout, with_provenance
from scoring.scorer import ScoringConfig
from scoring.storage import atomic_write_bytes, atomic_write_text
from scoring.tables.load import Inputs


def generated_at() -> str:
    """Now in UTC (ISO 8601, seconds), or ``SOURCE_DATE_EPOCH`` when that is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (
        dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        if epoch and epoch.isdigit()
        else dt.datetime.now(dt.UTC)
    )
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def provenance(
    inputs: Inputs,
    *,
    judges: dict[str, dict[str, Any]],
    primary_judge: str,
    scoring: ScoringConfig,
    rubrics_public: bool,
) -> dict[str, Any]:
    """What produced these tables: rubric set, judges (name -> provider, model, family, prompt
    template), scoring parameters, engine version."""
    return {
        "rubric_version": inputs.rubric_version,
        "rubrics_public": rubrics_public,
        "judges": judges,
        "primary_judge": primary_judge,
        "scoring": scoring.model_dump(mode="json"),
        "engine_version": __version__,
        "generated_at": generated_at(),
        "demo": any(m.demo for m in inputs.meta.values()),
        "n_questions": len(inputs.questions),
        "n_checks": inputs.checks.size,
        "n_submissions": len(inputs.submission_ids),
        "ignored_verdict_rows": inputs.ignored_rows,
    }


#: One encoder for every row (``json.dumps`` with options builds a new one per call).
_ROW_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _finite(table: pa.Table) -> pa.Table:
    """``table`` with every infinite float replaced by null (JSON has no infinity)."""
    columns = [
        pc.if_else(pc.is_inf(c), pa.scalar(None, c.type), c) if pa.types.is_floating(c.type) else c
        for c in table.columns
    ]
    return pa.Table.from_arrays(columns, schema=table.schema)


def records_json(table: pa.Table) -> str:
    """A table as a JSON array of objects, one per line; NaN, infinite and missing values become
    null (the Arrow table already holds NaN as null)."""
    lines = [_ROW_JSON.encode(row) for row in _finite(table).to_pylist()]
    return "[\n" + ",\n".join(lines) + ("\n" if lines else "") + "]\n"


def parquet_bytes(table: pa.Table, prov: dict[str, Any]) -> bytes:
    """A table as zstd Parquet bytes with the provenance in the file metadata."""
    buf = io.BytesIO()
    pq.write_table(with_provenance(table, prov), buf, compression="zstd")
    return buf.getvalue()


def write_tables(
    out_dir: Path,
    frames: Iterable[tuple[str, pd.DataFrame]],
    prov: dict[str, Any],
    parquet_only: Set[str],
) -> list[Path]:
    """Write every ``(name, table)`` as ``name.parquet`` and (unless in ``parquet_only``) CSV and
    JSON, encoding each as it arrives and writing none before all are encoded: a table that fails
    to build leaves the folder as it was. Returns the files written."""
    layout = ResultsLayout(out_dir)
    encoded: list[tuple[Path, bytes | str]] = []
    for name, df in frames:
        table = pa.Table.from_pandas(df, preserve_index=False)  # NaN becomes null
        encoded.append((layout.table(name), parquet_bytes(table, prov)))
        if name not in parquet_only:
            encoded.append((layout.table(name, "csv"), table_text_csv(table)))
            encoded.append((layout.table(name, "json"), records_json(table)))
    for path, body in encoded:
        if isinstance(body, str):
            atomic_write_text(path, body)
        else:
            atomic_write_bytes(path, body)
    return [path for path, _ in encoded]


def write_provenance(out_dir: Path, prov: dict[str, Any]) -> Path:
    """Write ``provenance.json``."""
    path = ResultsLayout(out_dir).provenance
    atomic_write_text(path, json.dumps(prov, indent=2, sort_keys=True) + "\n")
    return path
