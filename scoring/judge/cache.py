"""The local working index: a SQLite file (WAL) beside the ledger, never the store of record.

It holds what a run has not yet shipped to the ledger: each verdict and failure is committed here
as it arrives (so a killed run loses only its calls in flight) and moved into a ledger shard by
:meth:`VerdictCache.flush` (every few thousand verdicts and at the end of a run; the next run
ships what a killed run left). A verdict already stored is never replaced: ``INSERT OR IGNORE``.

Everything in it can be rebuilt from the ledger: a missing, empty or corrupt file is moved aside
and started afresh (the run says so), and the verdicts come from the ledger, not from new calls.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from scoring.errors import DiskFullError, GamutError
from scoring.ledger import FailureRecord, Ledger, VerdictRecord
from scoring.ledger.keys import KeyIndex, keys_array
from scoring.ledger.records import verdict_values
from scoring.verdicts import VERDICT_ORDER

SCHEMA_VERSION = "2"
#: Largest raw reply kept with a failure (characters); the rest is cut and the cut is said.
MAX_RAW_CHARS = 4000

_DDL = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verdicts (
    key BLOB PRIMARY KEY,
    judge_identity TEXT NOT NULL, judge TEXT NOT NULL, submission_id TEXT NOT NULL,
    setting TEXT NOT NULL, question_id TEXT NOT NULL, check_id TEXT NOT NULL,
    verdict INTEGER NOT NULL, model TEXT NOT NULL, source TEXT NOT NULL,
    tokens_in INTEGER NOT NULL, tokens_cached INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
    calls INTEGER NOT NULL, latency_s REAL NOT NULL, rationale TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    key BLOB PRIMARY KEY,
    judge_identity TEXT NOT NULL, judge TEXT NOT NULL, submission_id TEXT NOT NULL,
    setting TEXT NOT NULL, question_id TEXT NOT NULL, check_id TEXT NOT NULL,
    kind TEXT NOT NULL, calls INTEGER NOT NULL, message TEXT NOT NULL, raw TEXT NOT NULL,
    failed_at TEXT NOT NULL
);
"""
_V_COLS = (
    "key, judge_identity, judge, submission_id, setting, question_id, check_id, verdict, model, "
    "source, tokens_in, tokens_cached, tokens_out, calls, latency_s, rationale, created_at"
)
_F_COLS = (
    "key, judge_identity, judge, submission_id, setting, question_id, check_id, kind, calls, "
    "message, raw, failed_at"
)


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


class CacheCorruptError(GamutError):
    """The working index is corrupt and could not be moved aside."""


class CacheBusyError(GamutError):
    """The working index could not be opened, for a reason that moving it aside would not mend
    (another process holds it, or the disk failed a read): it is left as it is."""


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
    """Where verdicts and failures go as they arrive: the working index (:class:`VerdictCache`),
    or the columns of an imported file's ledger shard
    (:class:`scoring.judge.batch.shard.ShardSink`)."""

    def put(self, r: VerdictRecord, *, commit: bool = True) -> bool:
        """Store a verdict; False when the key already has one."""

    #: rubrics are held: a failure keeps no text but its kind's fixed wording
    held: bool

    def fail(self, r: FailureRecord) -> None:
        """Record a failure."""


def cap_raw(raw: str) -> str:
    """A raw reply as kept with a failure: at most :data:`MAX_RAW_CHARS`, the cut said."""
    return raw if len(raw) <= MAX_RAW_CHARS else raw[:MAX_RAW_CHARS] + " [cut]"


def _ts(t: dt.datetime) -> str:
    return t.isoformat()


class VerdictCache:
    """The SQLite working index of one ledger. Use as a context manager, or call :meth:`close`.

    Args:
        path: the SQLite file.
        ledger: the ledger it indexes (its key scheme is recorded; another scheme starts afresh).

    Attributes:
        notes: what opening had to do (a corrupt or empty file moved aside), for the run's report.
    """

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
        db.executescript(_DDL)
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
                raise CacheBusyError(
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
            raise CacheCorruptError(
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
        cur = self._db.execute(
            f"INSERT OR IGNORE INTO verdicts ({_V_COLS}) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                *verdict_values(r)[:-1],
                "" if self.ledger.held else r.rationale,
                _ts(r.created_at),
            ),
        )
        self._db.execute("DELETE FROM failures WHERE key=?", (r.key,))
        if commit:
            self._db.execute("COMMIT")
        return cur.rowcount == 1

    def fail(self, r: FailureRecord) -> None:
        """Record a failure (the latest of a key replaces an earlier one; held: no text)."""
        held = self.ledger.held
        raw = cap_raw(r.raw)
        self._db.execute(
            f"INSERT OR REPLACE INTO failures ({_F_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                r.key,
                r.judge_identity,
                r.judge,
                r.submission_id,
                r.setting,
                r.question_id,
                r.check_id,
                r.kind,
                r.calls,
                "" if held else r.message,
                "" if held else raw,
                _ts(r.failed_at),
            ),
        )

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
        """Ship every pending verdict and failure into new ledger shards; returns their names.

        Verdicts whose key the ledger already has (shipped by a run killed before it could say
        so) are dropped, not shipped twice.
        """
        rows = self._db.execute(f"SELECT {_V_COLS} FROM verdicts").fetchall()
        frows = self._db.execute(f"SELECT {_F_COLS} FROM failures").fetchall()
        if not rows and not frows:
            return []
        records = [
            VerdictRecord(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                verdict=VERDICT_ORDER[r[7]],
                model=r[8],
                source=r[9],
                tokens_in=r[10],
                tokens_cached=r[11],
                tokens_out=r[12],
                calls=r[13],
                latency_s=r[14],
                rationale=r[15],
                created_at=dt.datetime.fromisoformat(r[16]),
            )
            for r in rows
        ]
        if records:
            index, _ = self.ledger.key_index()
            new = ~index.contains(keys_array([r.key for r in records]))
            records = [r for r, keep in zip(records, new, strict=True) if keep]
        failures = [
            FailureRecord(
                f[0],
                f[1],
                f[2],
                f[3],
                f[4],
                f[5],
                f[6],
                kind=f[7],
                calls=f[8],
                message=f[9],
                raw=f[10],
                failed_at=dt.datetime.fromisoformat(f[11]),
            )
            for f in frows
        ]
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


__all__ = [
    "MAX_RAW_CHARS",
    "CacheCorruptError",
    "Ids",
    "VerdictCache",
    "VerdictSink",
    "cap_raw",
    "digest",
    "judge_identity",
]
