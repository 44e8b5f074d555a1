"""The verdicts and failures of one imported result file, gathered in columns and written to the
ledger as shards: the import's journal.

An imported file is ingested whole or not at all, so it needs no journal of its own: its verdicts
go straight into one ledger shard (written atomically, named by its bytes), then its failures into
another. A process killed before the verdict shard is renamed into place stored nothing of the
file; one killed between the two shards kept its verdicts, and importing the file again skips
them and records its failures (the next export asks those requests again in any case). Nothing
passes through the SQLite working index, whose one insert per verdict was a third of an import.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa

from scoring.judge.cache import MAX_RAW_CHARS, cap_raw
from scoring.ledger import FailureRecord, Ledger, VerdictRecord
from scoring.ledger.records import verdict_schema


class ShardSink:
    """A :class:`scoring.judge.cache.VerdictSink` that keeps one file's verdicts as columns of
    a verdict shard, and its failures, until :meth:`write`.

    Args:
        held: rubrics are held: no rationale is kept (nor, by the ledger, any failure text).
    """

    def __init__(self, held: bool) -> None:
        self.held = held
        self._schema = verdict_schema(held)
        self._verdicts: list[VerdictRecord] = []
        self._failures: list[FailureRecord] = []

    def __len__(self) -> int:
        return len(self._verdicts)

    def put(self, r: VerdictRecord, *, commit: bool = True) -> bool:
        """Keep a verdict (``commit`` is meaningless here: :meth:`write` writes them all).

        The caller offers each key once (a verdict leaves the keys it still asks for)."""
        self._verdicts.append(r)
        return True

    def fail(self, r: FailureRecord) -> None:
        """Keep a failure (its raw reply capped as the working index caps it)."""
        self._failures.append(replace(r, raw=cap_raw(r.raw)) if len(r.raw) > MAX_RAW_CHARS else r)

    def write(self, ledger: Ledger) -> list[str]:
        """Write the verdicts as one shard, then the failures as another; returns the names of
        the shards written (none for nothing) and starts afresh."""
        rs = self._verdicts
        cols: dict[str, list[Any]] = {
            name: [getattr(r, name) for r in rs] for name in self._schema.names if name != "verdict"
        }
        cols["verdict"] = [r.verdict.code for r in rs]
        table = pa.table(cols, schema=self._schema)
        names = [ledger.append_verdicts(table), ledger.append_failures(self._failures)]
        self._verdicts, self._failures = [], []
        return [n for n in names if n]


__all__ = ["ShardSink"]
