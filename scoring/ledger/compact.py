"""Compaction: runs of small pushed shards rewritten as a few, rows and order unchanged.

A compaction record names the new shards and the run they replace (:mod:`scoring.ledger.order`);
every row, duplicates too, counts where it did. Only pushed shards are compacted, so the run stays
on the remote; locally it is removed. The order of the atomic steps makes any interruption
harmless: the record (counting only once all its shards exist), the shards, then the removal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from scoring.ledger.checks import shard_name, write_parts
from scoring.ledger.order import COMPACTIONS, compaction_bytes, pushed_order, record_name
from scoring.ledger.records import KINDS
from scoring.ledger.store import Ledger, shard_bytes, shard_metadata
from scoring.storage import atomic_write_bytes

#: A shard of fewer rows than this is small: a run of small shards is compacted.
SMALL_ROWS = 50_000
#: ``gamut ledger push`` compacts first when the ledger has more small pushed shards than this.
COMPACT_AT = 256


@dataclass
class CompactReport:
    """What :func:`compact` did: per kind, the shards replaced and the shards written."""

    replaced: dict[str, list[str]] = field(default_factory=dict)
    written: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_replaced(self) -> int:
        """Shards replaced (and removed locally)."""
        return sum(len(v) for v in self.replaced.values())

    @property
    def n_written(self) -> int:
        """Shards written."""
        return sum(len(v) for v in self.written.values())


def small_runs(ledger: Ledger, kind: str) -> list[list[str]]:
    """The runs of two or more consecutive small pushed shards of ``kind`` present here, not
    replaced by a compaction already, in the pushed order (shard paths)."""
    rank, _, replaced = ledger.reading_order()
    present = set(ledger.shard_names(kind))
    runs: list[list[str]] = [[]]
    for path in pushed_order(rank, kind):
        name = path.split("/", 1)[1]
        if path not in replaced and name in present and _rows(ledger, kind, name) < SMALL_ROWS:
            runs[-1].append(path)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if len(r) > 1]


def small_shards(ledger: Ledger) -> int:
    """How many small pushed shards :func:`compact` would rewrite."""
    return sum(len(r) for kind in KINDS for r in small_runs(ledger, kind))


def compact(ledger: Ledger) -> CompactReport:
    """Rewrite every run of small pushed shards (:func:`small_runs`); the caller holds the lock.

    Raises:
        GamutError: a shard of a run cannot be read (named); nothing of that run is changed.
    """
    report = CompactReport()
    for kind in KINDS:
        for run in small_runs(ledger, kind):
            names = [p.split("/", 1)[1] for p in run]
            table = pa.concat_tables([ledger.read_shard(kind, n) for n in names])
            parts = [shard_bytes(t, kind, ledger.scheme, ledger.held) for t in write_parts(table)]
            del table
            written = [shard_name(data, ledger.scheme) for data in parts]
            record = compaction_bytes(kind, [f"{kind}/{n}" for n in written], run)
            path = ledger.root / COMPACTIONS / record_name(record, ledger.scheme)
            atomic_write_bytes(path, record, durable=True)
            for name, data in zip(written, parts, strict=True):
                if not (ledger.root / kind / name).exists():
                    atomic_write_bytes(ledger.root / kind / name, data, durable=True)
            del parts
            _, _, replaced = ledger.reading_order()
            if not set(run) <= replaced:  # cannot happen: the record counts once written
                continue
            for name in names:
                (ledger.root / kind / name).unlink(missing_ok=True)
            report.replaced.setdefault(kind, []).extend(run)
            report.written.setdefault(kind, []).extend(f"{kind}/{n}" for n in written)
    return report


def _rows(ledger: Ledger, kind: str, name: str) -> int:
    try:
        return int(shard_metadata(ledger.root / kind / name).num_rows)
    except (OSError, pa.ArrowException):
        return SMALL_ROWS  # unreadable: left alone (verify names it)
