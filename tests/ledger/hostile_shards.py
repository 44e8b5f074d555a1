"""Hostile verdict shards, built small in memory, and special files named like files of a
folder (:func:`plant`): the cases of ``tests/ledger/test_hostile.py`` and
``tests/hostile/test_special_files.py``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.ledger import KeyScheme, verdict_schema
from scoring.ledger.store import shard_bytes

ROOT = Path(__file__).resolve().parents[2]

#: The special files :func:`plant` makes, and what a reader says of each.
SPECIAL = {
    "fifo": "not a regular file but a named pipe (FIFO)",
    "socket": "not a regular file but a socket",
    "folder": "not a regular file but a folder",
    "link to /dev/zero": "not a regular file but a symbolic link",
}
#: Rows of the shard that claims more rows than a shard may hold.
MANY_ROWS = 40_000_000
#: Keys of the shard whose keys share the key index's former mix.
COLLIDING = 40_000


def raw_shard(table: pa.Table, meta: dict[str, object], store_schema: bool = True) -> bytes:
    """``table`` as Parquet with the ledger's metadata, written as a hostile writer would."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression="zstd", store_schema=store_schema) as w:
        w.write_table(table)
        w.add_key_value_metadata({"gamut.ledger": json.dumps(meta)})
    return bytes(sink.getvalue())


def public_meta() -> dict[str, object]:
    """The metadata of a public ledger's verdict shard."""
    return {"format": 1, "kind": "verdicts", "scheme": "sha256", "held": False}


def many_rows() -> bytes:
    """About 2.3 MB on disk that decode to :data:`MANY_ROWS` rows."""
    table = pa.table({"verdict": pa.array(np.zeros(MANY_ROWS, np.int8))})
    return raw_shard(table, public_meta())


def dictionary_bomb() -> bytes:
    """200,000 rows (under the row cap) whose judge is one 2,000-character string: a few
    hundred kilobytes on disk, 400 MB once decoded."""
    rows, sch = 200_000, verdict_schema(False)
    zeros = pa.array(np.zeros(rows, np.int32))
    cols: list[pa.Array] = []
    for f in sch:
        if f.name == "key":
            cols.append(pa.array([b"\0" * 32] * rows, f.type))
        elif pa.types.is_string(f.type):
            word = {"judge": "j" * 2000, "source": "direct"}.get(f.name, "a")
            cols.append(pa.DictionaryArray.from_arrays(zeros, pa.array([word])))
        elif pa.types.is_timestamp(f.type):
            cols.append(pa.array(np.zeros(rows, "datetime64[us]")).cast(f.type))
        else:
            cols.append(pa.array(np.zeros(rows, f.type.to_pandas_dtype())))
    fields = [pa.field(f.name, c.type, nullable=False) for f, c in zip(sch, cols, strict=True)]
    # without Arrow's schema, the file's columns read back as plain strings: a verdict shard's
    return raw_shard(pa.table(cols, schema=pa.schema(fields)), public_meta(), store_schema=False)


def colliding_keys(n: int = COLLIDING) -> np.ndarray:
    """Distinct keys whose words were chosen so that the key index's former mix (the XOR of
    the four words' high halves, the second shifted) is 0 for every one."""
    rng = np.random.default_rng(3)
    w = np.empty((n, 4), dtype=np.uint64)
    w[:, 0] = w[:, 2] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    w[:, 1] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    w[:, 3] = w[:, 1] >> np.uint64(1)
    old = (w[:, 0] ^ w[:, 2] ^ (w[:, 1] >> np.uint64(1)) ^ w[:, 3]) >> np.uint64(32)
    assert not old.any()
    return w.view(np.uint8).reshape(n, 32)


def colliding_shard(keys: np.ndarray, record: dict[str, object]) -> bytes:
    """A valid public verdict shard of ``keys`` (about 1 MB for :data:`COLLIDING`), every other
    column taken from ``record``."""
    n = len(keys)
    table = pa.table(
        {
            f.name: (
                pa.FixedSizeBinaryArray.from_buffers(f.type, n, [None, pa.py_buffer(keys)])
                if f.name == "key"
                else pa.array(np.zeros(n, np.int8))
                if f.name == "verdict"
                else pa.array([record[f.name]] * n, f.type)
            )
            for f in verdict_schema(False)
        },
        schema=verdict_schema(False),
    )
    return shard_bytes(table, "verdicts", KeyScheme.public(), held=False)


def run_gamut(*args: str) -> tuple[int, str, float, float, float]:
    """``gamut ARGS`` in a process of its own: exit code, output, wall and CPU seconds, and
    peak MB."""
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "gamut", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert p.stdout is not None
    out = p.stdout.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    cpu = usage.ru_utime + usage.ru_stime
    return os.waitstatus_to_exitcode(status), out, wall, cpu, usage.ru_maxrss / 1024


def plant(path: Path, kind: str) -> Path:
    """Put a special file of ``kind`` (a key of :data:`SPECIAL`) at ``path``, replacing a file
    there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":  # bound from its folder: a socket's path is short (108 bytes)
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(path.name)
        finally:
            os.chdir(here)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    return path
