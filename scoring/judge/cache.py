"""The local working index: a SQLite file (WAL) beside the ledger, never the store of record.

Each verdict is committed here as it arrives (a killed run loses only its calls in flight) and
shipped to a ledger shard by :meth:`VerdictCache.flush`. A missing or corrupt file is moved aside
and rebuilt from the ledger, never from new calls.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import operator
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import pyarrow as pa

from scoring.errors import DiskFullError, GamutError
from scoring.ledger import FailureRecord, Ledger, VerdictRecord
from scoring.ledger.keys import KeyIndex, keys_array
from scoring.ledger.records import failure_schema, verdict_schema
from scoring.verdicts import VERDICT_ORDER

SCHEMA_VERSION = "2"
#: Largest raw reply kept with a failure (characters); the rest is cut and the cut is said.
MAX_RAW_CHARS = 4000

_DDL = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""


class _Table:
    """A journal table whose rows are a public ledger shard's (schema in
    :mod:`scoring.ledger.records`); a held ledger's journal leaves the text columns empty."""

    def __init__(self, name: str, public: pa.Schema, held: pa.Schema) -> None:
        self.names = tuple(public.names)
        cols = ", ".join(self.names)
        self.insert = f"INTO {name} ({cols}) VALUES ({', '.join('?' * len(self.names))})"
        self.select = f"SELECT {cols} FROM {name}"
        self.create = f"CREATE TABLE IF NOT EXISTS {name} ({', '.join(map(_column, public))});"
        self._get = operator.attrgetter(*self.names)
        self._times = [i for i, f in enumerate(public) if pa.types.is_timestamp(f.type)]
        self._text = [i for i, n in enumerate(self.names) if n not in held.names]
        self._verdict = [i for i, n in enumerate(self.names) if n == "verdict"]

    def row(self, record: VerdictRecord | FailureRecord, held: bool) -> list[Any]:
        """The record's values, in the table's columns."""
        row = list(self._get(record))
        for i in self._verdict:
            row[i] = row[i].code
        for i in self._times:
            row[i] = row[i].isoformat()
        for i in self._text if held else ():
            row[i] = ""
        return row

    def fields(self, row: Sequence[Any]) -> dict[str, Any]:
        """A row as the fields of its record."""
        out = dict(zip(self.names, row, strict=True))
        for i in self._verdict:
            out[self.names[i]] = VERDICT_ORDER[row[i]]
        for i in self._times:
            out[self.names[i]] = dt.datetime.fromisoformat(row[i])
        return out


def _column(f: pa.Field) -> str:
    if pa.types.is_integer(f.type):
        kind = "INTEGER"
    elif pa.types.is_floating(f.type):
        kind = "REAL"
    else:  # the key's bytes, text, and a time as ISO text
        kind = "BLOB" if pa.types.is_fixed_size_binary(f.type) else "TEXT"
    return f"{f.name} {kind} NOT NULL" + (" PRIMARY KEY" if f.name == "key" else "")


_VERDICTS = _Table("verdicts", verdict_schema(held=False), verdict_schema(held=True))
_FAILURES = _Table("failures", failure_schema(held=False), failure_schema(held=True))


#: Seconds a connection waits for another's lock before it gives up.
OPEN_TIMEOUT_S = 30.0
#: SQLite's names (with their extended forms) for an error opening the index that says nothing
#: of the file itself: another process holds it, a read failed, no memory or permission. The
#: file is left where it is; any other error (not a database, corrupt, tables missing) moves it
#: aside to be rebuilt.
_TRANSIENT = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_IOERR",
    "SQLITE_CANTOPEN",
    "SQLITE_PERM",
    "SQLITE_READONLY",
    "SQLITE_NOMEM",
    "SQLITE_INTERRUPT",
)


def digest(*parts: str) -> str:
    """A hex SHA-256 over the parts, unambiguously separated."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def judge_identity(fields: dict[str, Any]) -> str:
    """The identity hash of a judge from its answer-changing fields (provider, model, prompt
    version and digest, decoding settings, backend extras)."""
    return digest(json.dumps(fields, sort_keys=True, default=str))[:32]


class Ids(NamedTuple):
    """Where a verdict belongs (for failure listings and auditing; not part of the key; a
    tuple: one is made per pair planned, and a frozen dataclass costs a microsecond more)."""

    judge: str
    submission_id: str
    setting: str
    question_id: str
    check_id: str


class VerdictSink(Protocol):
    """Where verdicts and failures go as they arrive: the working index, or an import's shard."""

    def put(self, r: VerdictRecord, *, commit: bool = True) -> bool:
        """Store a verdict; False when the key already has one."""

    #: rubrics are held: a failure keeps no text but its kind's fixed wording
    held: bool

    def fail(self, r: FailureRecord) -> None:
        """Record a failure."""


def cap_raw(raw: str) -> str:
    """A raw reply as kept with a failure: at most :data:`MAX_RAW_CHARS`, the cut said."""
    return raw if len(raw) <= MAX_RAW_CHARS else raw[:MAX_RAW_CHARS] + " [cut]"


class VerdictCache:
    """The SQLite working index of one ledger. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: Path, ledger: Ledger) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.ledger = ledger
        self.held = ledger.held
        self.notes: list[str] = []
        problem = self._problem()
        if problem is not None:
            self._move_aside(problem)
        self._db = self._connect()
        if self._db.execute("SELECT v FROM meta WHERE k='schema'").fetchone() is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            self._db.execute("INSERT INTO meta VALUES ('scheme', ?)", (ledger.scheme.scheme_id,))

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=OPEN_TIMEOUT_S)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_DDL + _VERDICTS.create + _FAILURES.create)
        return db

    def _problem(self) -> str | None:
        """Why the file cannot be used as it is (None when it can, or does not exist)."""
        if not self.path.exists():
            return None
        if self.path.stat().st_size == 0:
            return "the file is empty (0 bytes)"
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=OPEN_TIMEOUT_S)
            try:
                ok = db.execute("PRAGMA quick_check").fetchone()[0]
                meta = dict(db.execute("SELECT k, v FROM meta").fetchall())
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            full = DiskFullError.find(exc)
            if full is not None:
                raise DiskFullError(full.detail, str(self.path)) from exc
            name = str(getattr(exc, "sqlite_errorname", ""))
            if name.startswith(_TRANSIENT):
                raise GamutError(
                    f"the verdict index {self.path} cannot be opened ({exc}; {name}): another "
                    "gamut command may be using it (wait for it to finish), or the disk failed "
                    "a read; it was left as it is"
                ) from None
            return f"not a readable SQLite database ({exc})"
        if ok != "ok":
            return f"SQLite integrity check failed ({str(ok)[:200]})"
        if meta.get("schema") != SCHEMA_VERSION:
            return f"written by another engine version (schema {meta.get('schema')!r})"
        if meta.get("scheme") != self.ledger.scheme.scheme_id:
            return "written for a ledger with other keys"
        return None

    def _move_aside(self, problem: str) -> None:
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
        except OSError as exc:
            raise GamutError(
                f"the verdict index {self.path} cannot be used: {problem}; moving it aside "
                f"failed ({exc}): delete it and rerun, it is rebuilt from the ledger "
                f"{self.ledger.root}"
            ) from None
        self.notes.append(
            f"the verdict index {self.path} could not be used: {problem}; it was moved to "
            f"{aside.name} and rebuilt from the ledger {self.ledger.root} (verdicts in the "
            "ledger are kept; only those of an interrupted run not yet shipped are asked again)"
        )

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # -- writing ---------------------------------------------------------------------------

    def put(self, r: VerdictRecord, *, commit: bool = True) -> bool:
        """Store a verdict and clear its failure; False (and nothing changed) when the key
        already has one."""
        if commit:
            self._db.execute("BEGIN")
        cur = self._db.execute("INSERT OR IGNORE " + _VERDICTS.insert, _VERDICTS.row(r, self.held))
        self._db.execute("DELETE FROM failures WHERE key=?", (r.key,))
        if commit:
            self._db.execute("COMMIT")
        return cur.rowcount == 1

    def fail(self, r: FailureRecord) -> None:
        """Record a failure (the latest of a key replaces an earlier one; held: no text)."""
        row = _FAILURES.row(replace(r, raw=cap_raw(r.raw)), self.held)
        self._db.execute("INSERT OR REPLACE " + _FAILURES.insert, row)

    def begin(self) -> None:
        """Open a transaction for a batch of ``put(..., commit=False)``."""
        self._db.execute("BEGIN")

    def commit(self) -> None:
        """Commit a batch opened with :meth:`begin`."""
        self._db.execute("COMMIT")

    def pending(self) -> int:
        """Verdicts not yet shipped to the ledger."""
        return int(self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def flush(self) -> list[str]:
        """Ship every pending verdict and failure into new ledger shards; returns their names."""
        rows = self._db.execute(_VERDICTS.select).fetchall()
        frows = self._db.execute(_FAILURES.select).fetchall()
        if not rows and not frows:
            return []
        records = [VerdictRecord(**_VERDICTS.fields(r)) for r in rows]
        if records:
            index, _ = self.ledger.key_index()
            new = ~index.contains(keys_array([r.key for r in records]))
            records = [r for r, keep in zip(records, new, strict=True) if keep]
        failures = [FailureRecord(**_FAILURES.fields(f)) for f in frows]
        names = [self.ledger.append_verdicts(records), self.ledger.append_failures(failures)]
        self._db.execute("BEGIN")
        self._db.execute("DELETE FROM verdicts")
        self._db.execute("DELETE FROM failures")
        self._db.execute("COMMIT")
        return [n for n in names if n]

    def pending_index(self) -> KeyIndex:
        """The keys of the verdicts not yet shipped."""
        keys = [k for (k,) in self._db.execute("SELECT key FROM verdicts")]
        return KeyIndex(keys_array(keys))
