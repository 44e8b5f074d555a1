"""What a shard must be before the ledger trusts it: its name, its size, and its contents.

A shard is named by the SHA-256 of its bytes (public) or their HMAC under the shard MAC key
(held), so without the secret nobody can name a rewritten held shard. Checks run cheapest first
against a hostile file: file size, name (streamed), Parquet metadata (rows, values, uncompressed
bytes), then contents read with string columns as dictionaries (counted, not expanded): decoded
size and every value in range.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scoring.errors import NotRegularFileError, Problem
from scoring.ledger.keys import KeyScheme
from scoring.ledger.records import BATCHES, FAILURES, SOURCES, VERDICTS, schema
from scoring.storage import open_regular
from scoring.verdicts import VERDICT_ORDER

#: The key of a shard's metadata in its Parquet schema.
META_KEY = b"gamut.ledger"
#: Largest shard file read.
MAX_SHARD_BYTES = 256 << 20
#: Largest Parquet footer (metadata) read.
MAX_FOOTER_BYTES = 1 << 20
#: Most rows in one shard, and most values of one column (list columns hold several per row).
MAX_SHARD_ROWS = 1_000_000
MAX_COLUMN_VALUES = 4_000_000
#: Most bytes a shard may decode to (its columns as Arrow arrays, strings expanded).
MAX_DECODED_BYTES = 256 << 20
#: Rows a writer puts in one shard (a larger table is written as several shards).
WRITE_ROWS = 500_000
#: A failure kind or batch state: a short word (never free text).
_WORD = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_COUNTS = {
    VERDICTS: ("tokens_in", "tokens_cached", "tokens_out", "calls"),
    FAILURES: ("calls",),
    BATCHES: ("n_requests",),
}
_WORDS = {VERDICTS: (), FAILURES: ("kind",), BATCHES: ("state",)}


def shard_name(data: bytes, scheme: KeyScheme) -> str:
    """The file name of a shard whose bytes are ``data``: their MAC (held) or SHA-256."""
    key = scheme.mac_key
    h = hashlib.sha256(data) if key is None else hmac.new(key, data, hashlib.sha256)
    return h.hexdigest() + ".parquet"


def name_problem(f: BinaryIO, name: str, scheme: KeyScheme) -> str | None:
    """Why the bytes of ``f`` are not what its file ``name`` names (their SHA-256, or MAC when
    keyed), or None."""
    key = scheme.mac_key
    h: Any = hashlib.sha256() if key is None else hmac.new(key, b"", hashlib.sha256)
    f.seek(0)
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
    if hmac.compare_digest(h.hexdigest(), name.partition(".")[0]):
        return None
    if key is None:
        return "corrupted: its bytes do not match its name"
    return (
        "not authenticated: its name is not the MAC of its bytes under the ledger secret "
        "(corrupted, rewritten without the secret, or written under another secret)"
    )


def size_problem(f: BinaryIO) -> str | None:
    """Why the open file ``f`` or its Parquet footer is too large to read as a shard, or None."""
    size = os.fstat(f.fileno()).st_size
    if size > MAX_SHARD_BYTES:
        return f"{size} bytes, more than a shard's {MAX_SHARD_BYTES}"
    f.seek(max(size - 8, 0))
    tail = f.read(8)
    if len(tail) < 8 or tail[4:] != b"PAR1":
        return "not a Parquet file (no PAR1 footer)"
    footer = int.from_bytes(tail[:4], "little")
    if footer > MAX_FOOTER_BYTES:
        return f"a Parquet footer of {footer} bytes, more than a shard's {MAX_FOOTER_BYTES}"
    return None


def unreadable(path: Path, exc: OSError, fix: str) -> Problem:
    """The problem of a ledger file that cannot be read (one holding no regular file named so)."""
    if isinstance(exc, NotRegularFileError):
        return Problem(str(path), None, str(exc.strerror), "remove it: a ledger holds only files")
    return Problem(str(path), None, f"cannot be read ({type(exc).__name__})", fix)


def metadata_problem(md: pq.FileMetaData) -> str | None:
    """Why a shard's Parquet metadata promises more than a shard holds, or None."""
    if md.num_rows > MAX_SHARD_ROWS:
        return f"{md.num_rows} rows, more than a shard's {MAX_SHARD_ROWS}"
    total = 0
    values: dict[str, int] = {}
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            values[col.path_in_schema] = values.get(col.path_in_schema, 0) + col.num_values
            total += max(col.total_uncompressed_size, 0)
    if total > MAX_DECODED_BYTES:
        return f"{total} uncompressed bytes, more than a shard's {MAX_DECODED_BYTES}"
    for name, n in values.items():
        if n > MAX_COLUMN_VALUES:
            return f"{n} values in column {name}, more than a shard's {MAX_COLUMN_VALUES}"
    return None


def contents_problem(f: BinaryIO, kind: str, pf: pq.ParquetFile) -> str | None:
    """Why the contents of the shard open as ``f`` are not a ledger's, or None (string columns read
    as dictionaries, so the decoded size is counted before anything is expanded)."""
    strings = _string_paths(pf.schema_arrow)
    table = pq.ParquetFile(f, read_dictionary=strings).read()
    if table.num_rows > MAX_SHARD_ROWS or table.num_rows != pf.metadata.num_rows:
        return f"holds {table.num_rows} rows, its metadata counts {pf.metadata.num_rows}"
    decoded = sum(_decoded_bytes(table[name]) for name in table.column_names)
    if decoded > MAX_DECODED_BYTES:
        return f"decodes to {decoded} bytes, more than a shard's {MAX_DECODED_BYTES}"
    if kind == VERDICTS:
        bad = code_problem(table["verdict"])
        if bad:
            return bad
        lat = table["latency_s"].to_numpy()
        if len(lat) and not (np.isfinite(lat).all() and (lat >= 0).all()):
            return "a latency is negative or not a number"
        src = _values(table["source"])
        if not src <= set(SOURCES):
            return f"unknown source(s) {sorted(src - set(SOURCES))[:5]} (known: {SOURCES})"
    for name in _COUNTS[kind]:
        low = pc.min(table[name]).as_py()
        if low is not None and low < 0:
            return f"a negative count in {name} ({low})"
    for name in _WORDS[kind]:
        odd = sorted(w for w in _values(table[name]) if not _WORD.match(w))
        if odd:
            return f"{name} {odd[0][:40]!r} is not a short word (letters, digits, _.:-)"
    return None


def code_problem(col: pa.ChunkedArray | pa.Array) -> str | None:
    """Why a verdict column holds a code no verdict has (None when it holds none)."""
    got = pc.min_max(col).as_py()
    lo, hi = got["min"], got["max"]
    if lo is not None and (lo < 0 or hi >= len(VERDICT_ORDER)):
        bad = lo if lo < 0 else hi
        return f"verdict code {bad} is not one of 0..{len(VERDICT_ORDER) - 1}"
    return None


def shard_problems(path: Path, kind: str, scheme: KeyScheme, held: bool) -> list[Problem]:
    """The problems of one shard file of ``kind`` (empty when sound), cheapest checks first: nothing
    is decoded before the name and metadata check out."""
    fix = "restore this shard from another copy of the ledger (gamut ledger pull), or remove it"
    try:
        f = open_regular(path)
    except OSError as exc:
        return [unreadable(path, exc, fix)]
    with f:
        return _shard_problems(f, path, kind, scheme, held, fix)


def _shard_problems(
    f: BinaryIO, path: Path, kind: str, scheme: KeyScheme, held: bool, fix: str
) -> list[Problem]:
    try:
        bad = size_problem(f)
        if bad:  # nothing more is read of a file too large (or with too large a footer)
            return [Problem(str(path), None, bad, fix)]
        bad = name_problem(f, path.name, scheme)
    except OSError as exc:
        bad = f"cannot be read ({type(exc).__name__})"
    if bad:  # its footer (size-checked) may say why: another ledger's
        return [_foreign(f, path, scheme) or Problem(str(path), None, bad, fix)]
    try:
        pf = pq.ParquetFile(f)
        bad = metadata_problem(pf.metadata)
        if bad:
            return [Problem(str(path), None, f"refused before decoding: {bad}", fix)]
        meta = shard_meta(pf.schema_arrow)
        got = pf.schema_arrow.remove_metadata()
    except (OSError, pa.ArrowException) as exc:
        return [Problem(str(path), None, f"not a readable Parquet shard ({exc})", fix)]
    if meta.get("kind") != kind or meta.get("scheme") != scheme.scheme_id:
        return [_foreign_problem(path, meta, scheme, kind)]
    if not got.equals(schema(kind, held)):
        return [Problem(str(path), None, f"columns {got.names} are not a {kind} shard's", fix)]
    try:
        bad = contents_problem(f, kind, pf)
    except (OSError, pa.ArrowException) as exc:
        bad = f"its rows cannot be read ({exc})"
    return [Problem(str(path), None, bad, fix)] if bad else []


def _foreign(f: BinaryIO, path: Path, scheme: KeyScheme) -> Problem | None:
    """The problem of a shard whose footer names another key scheme, or None."""
    try:
        meta = shard_meta(pq.ParquetFile(f).schema_arrow)
    except (OSError, pa.ArrowException):
        return None
    if not meta or meta.get("scheme") == scheme.scheme_id:
        return None
    return _foreign_problem(path, meta, scheme)


def _foreign_problem(
    path: Path, meta: dict[str, object], scheme: KeyScheme, kind: str | None = None
) -> Problem:
    """A shard of another ledger: written as another kind (when ``kind`` is given) or under
    other keys."""
    written = f"written as {meta.get('kind')!r} under keys " if kind else "written under keys "
    ours = f"this ledger holds {kind!r} under " if kind else "this ledger's are "
    message = f"a foreign shard: {written}{meta.get('scheme')!r}, {ours}{scheme.scheme_id!r}"
    return Problem(str(path), None, message, "remove it; it belongs to another ledger")


def shard_meta(s: pa.Schema) -> dict[str, object]:
    """The ledger's metadata of a shard (kind, key scheme, held), or empty."""
    raw = (s.metadata or {}).get(META_KEY)
    if raw is None:
        return {}
    try:
        out = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return out if isinstance(out, dict) else {}


def write_parts(table: pa.Table) -> list[pa.Table]:
    """``table`` as one shard's row slices: at most :data:`WRITE_ROWS` rows and a quarter of
    :data:`MAX_DECODED_BYTES` each (so a list column of keys stays under :data:`MAX_COLUMN_VALUES`).
    """
    n = table.num_rows
    per_row = table.nbytes / max(n, 1)
    rows = max(1, min(WRITE_ROWS, math.floor(MAX_DECODED_BYTES / 4 / max(per_row, 1))))
    return [table.slice(i, rows) for i in range(0, n, rows)] if n > rows else [table]


def _string_paths(s: pa.Schema) -> list[str]:
    out = []
    for f in s:
        t = f.type
        if pa.types.is_string(t) or pa.types.is_binary(t):
            out.append(f.name)
        elif pa.types.is_list(t) and (
            pa.types.is_string(t.value_type) or pa.types.is_binary(t.value_type)
        ):
            out.append(f"{f.name}.list.element")
    return out


def _decoded_bytes(col: pa.ChunkedArray) -> int:
    """The bytes ``col`` takes once its dictionaries are expanded."""
    total = 0
    for chunk in col.chunks:
        arr = chunk
        if isinstance(chunk, pa.ListArray):
            arr = chunk.values
            total += chunk.offsets.nbytes
        if isinstance(arr, pa.DictionaryArray):
            lengths = pc.binary_length(arr.dictionary).to_numpy(zero_copy_only=False)
            idx = arr.indices.to_numpy(zero_copy_only=False)
            total += 4 * len(arr) + (int(lengths[idx].sum()) if len(idx) else 0)
        else:
            total += arr.nbytes
    return total


def _values(col: pa.ChunkedArray) -> set[str]:
    """The distinct values of a (dictionary) string column, or of the lists of one."""
    out: set[str] = set()
    for chunk in col.chunks:
        arr = chunk.values if isinstance(chunk, pa.ListArray) else chunk
        if isinstance(arr, pa.DictionaryArray):
            arr = arr.dictionary.take(pc.unique(arr.indices))
        out.update(v for v in pc.unique(arr).to_pylist() if v is not None)
    return out
