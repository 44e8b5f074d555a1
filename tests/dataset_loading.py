"""Loading a dataset folder (the site's downloads, the Hub layout) as its readers do: every
config of its card's ``configs:`` header with ``datasets`` offline, every Parquet and CSV file with
pandas, pyarrow, DuckDB and polars."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow.csv as pv
import pyarrow.parquet as pq
import yaml

#: Loads every config in a fresh interpreter with the Hub switched off (both libraries read the
#: switch at import), printing rows, columns and features per config as JSON.
LOADER = """
import json, sys
import datasets
folder, cache, names = sys.argv[1], sys.argv[2], sys.argv[3:]
out = {}
for name in names:
    ds = datasets.load_dataset(folder, name, split="train", cache_dir=cache)
    out[name] = {"rows": ds.num_rows, "columns": ds.column_names,
                 "features": {k: str(v) for k, v in ds.features.items()},
                 "judge_id": sorted(set(ds["judge_id"])) if name == "verdicts" else []}
print(json.dumps(out))
"""


def card_configs(folder: Path) -> dict[str, list[str]]:
    """Config name -> its data files, from the folder's ``README.md`` header."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    return {c["config_name"]: [f["path"] for f in c["data_files"]] for c in header["configs"]}


def load_configs(folder: Path, cache: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """Every config of ``folder`` as ``datasets.load_dataset(folder, name)`` reads it, offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(cache / "home")}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", LOADER, str(folder), str(cache), *names],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def read_everywhere(path: Path) -> int:
    """The rows of a Parquet or CSV (plain or gzipped) file, read the same by pandas, pyarrow,
    DuckDB and polars (eagerly, and lazily where polars can scan the file)."""
    if path.suffix == ".parquet":
        rows = int(pq.read_table(path).num_rows)
        assert len(pd.read_parquet(path)) == rows, path
        sql = f"SELECT count(*) FROM read_parquet('{path}')"
        assert pl.read_parquet(path).height == rows, path
        assert pl.scan_parquet(path).select(pl.len()).collect().item() == rows, path
    else:
        rows = int(pv.read_csv(path).num_rows)
        assert len(pd.read_csv(path)) == rows, path
        sql = f"SELECT count(*) FROM read_csv('{path}')"
        assert pl.read_csv(path).height == rows, path
        if path.suffix == ".csv":  # polars scans uncompressed CSV only
            assert pl.scan_csv(path).select(pl.len()).collect().item() == rows, path
    counted = duckdb.sql(sql)
    assert counted is not None and counted.fetchall() == [(rows,)], path
    return rows
