"""Writing the score tables: Parquet (with the provenance as file metadata), CSV and JSON.

Files are written atomically and deterministically: the same inputs give byte-identical files
(``generated_at`` honours ``SOURCE_DATE_EPOCH``).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring import __version__
from scoring.scorer import ScoringConfig
from scoring.storage import atomic_write_bytes, atomic_write_text
from scoring.tables.csvcells import frame_csv
from scoring.tables.load import Inputs

PROVENANCE_KEY = b"gamut.provenance"
#: The provenance file's name, inside the results folder.
PROVENANCE_FILE = "provenance.json"


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
    """What produced these tables: rubric set, judges, scoring parameters, engine version.

    Args:
        inputs: what the tables were computed from.
        judges: judge name -> its identity (provider, model, family, prompt template).
        primary_judge: the judge that ranks the leaderboard.
        scoring: the scoring parameters.
        rubrics_public: whether the rubrics are public.
    """
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


def _json_value(x: Any) -> Any:
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is pd.NA or x is pd.NaT:
        return None
    return x


def records_json(df: pd.DataFrame) -> str:
    """A table as a JSON array of objects, one per line; NaN and missing values become null."""
    cols = list(df.columns)
    lines = []
    for row in df.itertuples(index=False, name=None):
        rec = {c: _json_value(v) for c, v in zip(cols, row, strict=True)}
        lines.append(json.dumps(rec, ensure_ascii=False, allow_nan=False))
    return "[\n" + ",\n".join(lines) + ("\n" if lines else "") + "]\n"


def parquet_bytes(df: pd.DataFrame, prov: dict[str, Any]) -> bytes:
    """A table as zstd Parquet bytes with the provenance in the file metadata."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[PROVENANCE_KEY] = json.dumps(prov, sort_keys=True).encode()
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buf, compression="zstd")
    return buf.getvalue()


def write_table(
    out_dir: Path, name: str, df: pd.DataFrame, prov: dict[str, Any], text: bool = True
) -> list[Path]:
    """Write ``name.parquet`` and, when ``text``, ``name.csv`` and ``name.json``."""
    written = [out_dir / f"{name}.parquet"]
    atomic_write_bytes(written[0], parquet_bytes(df, prov))
    if text:
        written += [out_dir / f"{name}.csv", out_dir / f"{name}.json"]
        atomic_write_text(written[1], frame_csv(df))
        atomic_write_text(written[2], records_json(df))
    return written


def write_provenance(out_dir: Path, prov: dict[str, Any]) -> Path:
    """Write ``provenance.json``."""
    path = out_dir / PROVENANCE_FILE
    atomic_write_text(path, json.dumps(prov, indent=2, sort_keys=True) + "\n")
    return path
