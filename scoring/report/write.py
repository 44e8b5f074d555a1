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
from scoring.config import GamutConfig, JudgeConfig
from scoring.errors import GamutError
from scoring.judge.prompt import load_template
from scoring.report.load import Inputs
from scoring.storage import atomic_write_bytes, atomic_write_text

PROVENANCE_KEY = b"gamut.provenance"


def generated_at() -> str:
    """Now in UTC (ISO 8601, seconds), or ``SOURCE_DATE_EPOCH`` when that is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (
        dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        if epoch and epoch.isdigit()
        else dt.datetime.now(dt.UTC)
    )
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _judge_provenance(judge: JudgeConfig) -> dict[str, Any]:
    """A judge's identity: provider, model, family and the prompt template it used."""
    out: dict[str, Any] = {
        "provider": judge.provider,
        "model": judge.model,
        "prompt_version": judge.prompt_version,
        "family": judge.family,
    }
    try:
        template = load_template(judge.prompt_version)
    except GamutError:
        return out  # the verdicts exist; an unknown template is the judge step's error to report
    out["prompt_template"] = template.version
    out["prompt_digest"] = template.digest
    return out


def provenance(cfg: GamutConfig, inputs: Inputs) -> dict[str, Any]:
    """What produced these tables: rubric set, judges, scoring parameters, engine version."""
    return {
        "rubric_version": inputs.rubric_version,
        "rubrics_public": cfg.benchmark.rubrics_public,
        "judges": {name: _judge_provenance(j) for name, j in cfg.judges.items()},
        "primary_judge": cfg.primary_judge,
        "scoring": cfg.scoring.model_dump(mode="json"),
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
        atomic_write_text(written[1], df.to_csv(index=False, lineterminator="\n"))
        atomic_write_text(written[2], records_json(df))
    return written


def write_provenance(out_dir: Path, prov: dict[str, Any]) -> Path:
    """Write ``provenance.json``."""
    path = out_dir / "provenance.json"
    atomic_write_text(path, json.dumps(prov, indent=2, sort_keys=True) + "\n")
    return path
