"""The verdict cache: a SQLite file (WAL) keyed by a content hash of everything that can change a
verdict. Each verdict is committed as it arrives, so a killed run loses only its calls in flight.

Failures are kept in their own table with the raw reply; a failure is retried on the next run and
removed once that (response, check) gets a verdict.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.errors import GamutError

SCHEMA_VERSION = "1"

_DDL = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    judge_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    rationale TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_cached INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    calls INTEGER NOT NULL,
    judge TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    setting TEXT NOT NULL,
    question_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS verdicts_judge ON verdicts (judge_id);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    judge_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    setting TEXT NOT NULL,
    question_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    raw TEXT NOT NULL,
    calls INTEGER NOT NULL,
    failed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_judge ON failures (judge_id);
"""


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


@dataclass(frozen=True, slots=True)
class Ids:
    """Where a verdict belongs (for failure listings and auditing; not part of the key)."""

    judge: str
    submission_id: str
    setting: str
    question_id: str
    check_id: str


@dataclass(frozen=True, slots=True)
class CachedVerdict:
    """A stored verdict."""

    verdict: str
    rationale: str


@dataclass(frozen=True, slots=True)
class StoredFailure:
    """A stored failure, listed at the end of a run and retried on the next."""

    ids: Ids
    kind: str
    message: str
    raw: str
    calls: int


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class VerdictCache:
    """The SQLite verdict cache. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_DDL)
            row = self._db.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise GamutError(
                f"cannot open the verdict cache {path}: {exc} (move the file aside "
                "to start a fresh cache)"
            ) from None
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise GamutError(
                f"verdict cache {path} has schema {row[0]}, this engine writes "
                f"{SCHEMA_VERSION} (move the file aside to start a fresh cache)"
            )
        self._failed: set[str] = {k for (k,) in self._db.execute("SELECT key FROM failures")}

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def verdicts(self, judge_id: str) -> dict[str, CachedVerdict]:
        """Every stored verdict of one judge identity, by key."""
        cur = self._db.execute(
            "SELECT key, verdict, rationale FROM verdicts WHERE judge_id=?", (judge_id,)
        )
        return {k: CachedVerdict(v, r) for k, v, r in cur}

    def keys(self, judge_id: str) -> set[str]:
        """Keys of every stored verdict of one judge identity."""
        cur = self._db.execute("SELECT key FROM verdicts WHERE judge_id=?", (judge_id,))
        return {k for (k,) in cur}

    def get(self, key: str) -> CachedVerdict | None:
        """One stored verdict, or None."""
        row = self._db.execute(
            "SELECT verdict, rationale FROM verdicts WHERE key=?", (key,)
        ).fetchone()
        return None if row is None else CachedVerdict(row[0], row[1])

    def put(
        self,
        key: str,
        judge_id: str,
        ids: Ids,
        verdict: str,
        rationale: str,
        *,
        tokens_in: int = 0,
        tokens_cached: int = 0,
        tokens_out: int = 0,
        latency_s: float = 0.0,
        calls: int = 1,
        commit: bool = True,
    ) -> None:
        """Store a verdict (committed at once unless ``commit`` is False) and clear any failure."""
        clear = key in self._failed
        if commit and clear:
            self._db.execute("BEGIN")
        self._db.execute(
            "INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                judge_id,
                verdict,
                rationale,
                tokens_in,
                tokens_cached,
                tokens_out,
                latency_s,
                calls,
                ids.judge,
                ids.submission_id,
                ids.setting,
                ids.question_id,
                ids.check_id,
                _now(),
            ),
        )
        if clear:
            self._db.execute("DELETE FROM failures WHERE key=?", (key,))
            self._failed.discard(key)
            if commit:
                self._db.execute("COMMIT")

    def begin(self) -> None:
        """Open a transaction for a batch of ``put(..., commit=False)``."""
        self._db.execute("BEGIN")

    def commit(self) -> None:
        """Commit a batch opened with :meth:`begin`."""
        self._db.execute("COMMIT")

    def fail(
        self, key: str, judge_id: str, ids: Ids, kind: str, message: str, raw: str, calls: int
    ) -> None:
        """Record a failure (replacing an earlier one for the same key)."""
        self._failed.add(key)
        self._db.execute(
            "INSERT OR REPLACE INTO failures VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                judge_id,
                ids.judge,
                ids.submission_id,
                ids.setting,
                ids.question_id,
                ids.check_id,
                kind,
                message,
                raw,
                calls,
                _now(),
            ),
        )

    def failures(self, judge_ids: Iterable[str] | None = None) -> list[StoredFailure]:
        """Stored failures (of the given judge identities, or all)."""
        rows = self._db.execute(
            "SELECT judge_id, judge, submission_id, setting, question_id, check_id, kind, "
            "message, raw, calls FROM failures ORDER BY judge, submission_id, setting, "
            "question_id, check_id"
        ).fetchall()
        wanted = None if judge_ids is None else set(judge_ids)
        return [
            StoredFailure(Ids(*r[1:6]), r[6], r[7], r[8], r[9])
            for r in rows
            if wanted is None or r[0] in wanted
        ]

    def usage(self, judge_id: str) -> tuple[int, int, int, int]:
        """Totals over a judge identity's stored verdicts: calls, tokens in, cached, out."""
        row = self._db.execute(
            "SELECT COALESCE(SUM(calls),0), COALESCE(SUM(tokens_in),0), "
            "COALESCE(SUM(tokens_cached),0), COALESCE(SUM(tokens_out),0) "
            "FROM verdicts WHERE judge_id=?",
            (judge_id,),
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2]), int(row[3])


__all__ = ["CachedVerdict", "Ids", "StoredFailure", "VerdictCache", "digest", "judge_identity"]
