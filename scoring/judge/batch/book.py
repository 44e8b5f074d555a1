"""The record of every batch a judge submitted, kept in the ledger's batch-state shards.

One appended row per state change; a batch's state is its latest row: ``submitting`` (recorded
under ``pending-<tag>`` with its keys before the provider has an id), the provider's words while
it runs, then ``collected``, ``created``, ``lost``, ``unreadable`` or ``foreign`` (another
project's batch, found by a sweep). ``imported`` rows journal imported lines
(:mod:`scoring.judge.batch.shard`). Never request or reply text.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field, replace

import pyarrow as pa

from scoring.ledger import BatchState, Ledger, custom_id
from scoring.ledger.records import NO_REQUESTS

#: The state of another project's batch (found by a sweep of the provider's listing).
FOREIGN = "foreign"
#: States after which a batch needs nothing more.
FINAL_STATES = frozenset({"collected", "created", "lost", "unreadable", "imported", FOREIGN})
#: Reads of a finished batch's results that may fail (one per step) before it is given up.
MAX_READ_TRIES = 3
PENDING = "pending-"


@dataclass(frozen=True)
class BatchRecord:
    """One batch as last recorded."""

    tag: str
    batch_id: str
    judge: str
    judge_id: str
    provider: str
    state: str
    keys: tuple[bytes, ...]
    attempt: int
    submissions: tuple[str, ...]
    created_at: dt.datetime
    requests: pa.StructArray = field(default_factory=lambda: NO_REQUESTS, compare=False)
    run: str = ""
    tries: int = 0

    @property
    def open(self) -> bool:
        """Whether the batch still needs collecting."""
        return self.state not in FINAL_STATES

    @property
    def n_requests(self) -> int:
        """Requests in the batch."""
        return len(self.keys)

    @property
    def custom_ids(self) -> list[str]:
        """Its requests' custom ids."""
        return [custom_id(k) for k in self.keys]

    def moved(self, state: str, batch_id: str | None = None) -> BatchRecord:
        """This record in a new state (and with the provider's id, once known)."""
        return replace(self, state=state, batch_id=self.batch_id if batch_id is None else batch_id)


class BatchBook:
    """Batch records in a ledger's batch-state shards."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        #: judge identity -> batch id -> latest record, read once and kept up to date by
        #: :meth:`record` (this process is the ledger's one writer while it judges)
        self._latest: dict[str, dict[str, BatchRecord]] = {}

    def record(self, *recs: BatchRecord, with_keys: bool = False) -> None:
        """Append ``recs`` as their batches' latest states, in one shard (``with_keys``: also
        the keys, on the first row of a batch)."""
        self.ledger.append_batch_states(
            [
                BatchState(
                    batch_id=r.batch_id,
                    judge=r.judge,
                    judge_identity=r.judge_id,
                    provider=r.provider,
                    state=r.state,
                    n_requests=r.n_requests,
                    created_at=r.created_at,
                    keys=r.keys if with_keys else (),
                    requests=r.requests if with_keys else NO_REQUESTS,
                    detail=json.dumps(
                        {
                            "tag": r.tag,
                            "run": r.run,
                            "attempt": r.attempt,
                            "submissions": list(r.submissions),
                            "tries": r.tries,
                        }
                    ),
                )
                for r in recs
            ]
        )
        for r in recs:
            known = self._latest.get(r.judge_id)
            if known is None:
                continue
            old = known.get(r.batch_id)
            keep = (
                r if with_keys or old is None else replace(r, keys=old.keys, requests=old.requests)
            )
            known[r.batch_id] = keep

    def latest(self, judge_id: str) -> list[BatchRecord]:
        """The latest record of every batch of one judge identity."""
        if judge_id not in self._latest:
            self._latest[judge_id] = {r.batch_id: r for r in self._read(judge_id)}
        return list(self._latest[judge_id].values())

    def _read(self, judge_id: str) -> list[BatchRecord]:
        out = []
        for s in self.ledger.latest_batch_states([judge_id]):
            try:
                d = json.loads(s.detail or "{}")
            except json.JSONDecodeError:
                d = {}
            out.append(
                BatchRecord(
                    tag=str(d.get("tag", "")),
                    batch_id=s.batch_id,
                    judge=s.judge,
                    judge_id=s.judge_identity,
                    provider=s.provider,
                    state=s.state,
                    keys=s.keys,
                    attempt=int(d.get("attempt", 1)),
                    submissions=tuple(d.get("submissions", ())),
                    created_at=s.created_at,
                    requests=s.requests,
                    run=str(d.get("run", "")),
                    tries=int(d.get("tries", 0)),
                )
            )
        return out

    def open_batches(self, judge_id: str) -> list[BatchRecord]:
        """Batches still to collect, oldest first."""
        return sorted((r for r in self.latest(judge_id) if r.open), key=lambda r: r.created_at)
