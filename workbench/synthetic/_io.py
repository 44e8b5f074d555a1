"""The synthetic generators' writers: sorted, fixed formatting, no timestamps, atomic (the same
inputs give byte-identical files)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from scoring.storage import atomic_write_bytes, atomic_write_text


def jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    """JSON Lines text: one compact object a line, keys in the given order, UTF-8 kept as is."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)


def write_yaml(path: Path, data: Mapping[str, Any]) -> None:
    """Write a mapping as block-style YAML with sorted keys, atomically."""
    text = yaml.safe_dump(dict(data), sort_keys=True, allow_unicode=True, default_flow_style=False)
    atomic_write_text(path, text)


def write_parquet(path: Path, table: pa.Table) -> None:
    """Write a table as zstd-compressed Parquet with no pandas or timestamp metadata, atomically."""
    table = table.replace_schema_metadata(None)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=True, write_statistics=False)
    atomic_write_bytes(path, buf.getvalue())
