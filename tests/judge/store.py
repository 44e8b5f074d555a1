"""Reading what a judge run stored, straight from the files: the ledger's shards and the
SQLite working index (verdicts not yet shipped), for tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def _shards(root: Path, kind: str) -> pa.Table | None:
    files = sorted((root / ".gamut" / "ledger" / kind).glob("*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files]) if files else None


def _index(root: Path, sql: str) -> list[tuple[object, ...]]:
    path = root / ".gamut" / "verdicts.sqlite"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []


def verdict_keys(root: Path) -> list[bytes]:
    """Every stored verdict's key, once per time it is stored (ledger, then index)."""
    t = _shards(root, "verdicts")
    keys = [] if t is None else t["key"].to_pylist()
    return keys + [k for (k,) in _index(root, "SELECT key FROM verdicts")]


def failures(root: Path) -> dict[bytes, dict[str, object]]:
    """The open failures by key: the latest of each key that has no verdict."""
    done = set(verdict_keys(root))
    out: dict[bytes, dict[str, object]] = {}
    t = _shards(root, "failures")
    rows = [] if t is None else sorted(t.to_pylist(), key=lambda r: r["failed_at"])
    rows += [
        {"key": k, "kind": kind, "raw": raw, "message": msg}
        for k, kind, raw, msg in _index(root, "SELECT key, kind, raw, message FROM failures")
    ]
    for r in rows:
        key = r["key"]
        assert isinstance(key, bytes)
        if key not in done:
            out[key] = r
    return out


def verdict_words(root: Path) -> dict[tuple[str, ...], int]:
    """(judge, submission, setting, question, check) -> verdict code, of every stored verdict
    (ledger, then index; the first of a key counts)."""
    out: dict[tuple[str, ...], int] = {}
    cols = "judge, submission_id, setting, question_id, check_id, verdict"
    t = _shards(root, "verdicts")
    rows = (
        [] if t is None else [tuple(r[c.strip()] for c in cols.split(",")) for r in t.to_pylist()]
    )
    rows += _index(root, f"SELECT {cols} FROM verdicts")
    for r in rows:
        out.setdefault(tuple(str(x) for x in r[:5]), int(r[5]))  # type: ignore[call-overload]
    return out


def batch_rows(root: Path) -> list[tuple[str, str]]:
    """Every batch-state row of the ledger, as (batch id, state), in shard order."""
    t = _shards(root, "batches")
    if t is None:
        return []
    return list(zip(t["batch_id"].to_pylist(), t["state"].to_pylist(), strict=True))
