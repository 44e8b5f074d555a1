"""What a ledger holds: verdicts, failures and batch states, as rows and as Arrow schemas.

A held ledger has no free-text columns (rationale, failure message, raw reply): they can restate
held check text, and a ledger is copied. The ids are public.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import pyarrow as pa

from scoring.ledger.keys import KEY_BYTES, custom_id
from scoring.verdicts import PAIR_KEY, VERDICT_ORDER, Verdict

#: Kinds of shard, each in its own folder of the ledger.
VERDICTS, FAILURES, BATCHES = "verdicts", "failures", "batches"
KINDS = (VERDICTS, FAILURES, BATCHES)

#: Where a verdict came from.
SOURCES = ("direct", "batch", "replay", "import")

_KEY = pa.binary(KEY_BYTES)
_TS = pa.timestamp("us", tz="UTC")
_IDS = [
    pa.field("key", _KEY, nullable=False),
    pa.field("judge_identity", pa.string(), nullable=False),
    pa.field("judge", pa.string(), nullable=False),
    pa.field("submission_id", pa.string(), nullable=False),
    pa.field("setting", pa.string(), nullable=False),
    pa.field("question_id", pa.string(), nullable=False),
    pa.field("check_id", pa.string(), nullable=False),
]


def verdict_schema(held: bool) -> pa.Schema:
    """Columns of a verdict shard (``rationale`` only when rubrics are public)."""
    fields = [
        *_IDS,
        pa.field("verdict", pa.int8(), nullable=False),  # Verdict.code
        pa.field("model", pa.string(), nullable=False),  # the snapshot the provider reported
        pa.field("source", pa.string(), nullable=False),
        pa.field("tokens_in", pa.int64(), nullable=False),
        pa.field("tokens_cached", pa.int64(), nullable=False),
        pa.field("tokens_out", pa.int64(), nullable=False),
        pa.field("calls", pa.int32(), nullable=False),
        pa.field("latency_s", pa.float64(), nullable=False),
        pa.field("created_at", _TS, nullable=False),
    ]
    if not held:
        fields.append(pa.field("rationale", pa.string(), nullable=False))
    return pa.schema(fields)


def failure_schema(held: bool) -> pa.Schema:
    """Columns of a failure shard (``message`` and ``raw`` only when rubrics are public)."""
    fields = [
        *_IDS,
        pa.field("kind", pa.string(), nullable=False),
        pa.field("calls", pa.int32(), nullable=False),
        pa.field("failed_at", _TS, nullable=False),
    ]
    if not held:
        fields += [
            pa.field("message", pa.string(), nullable=False),
            pa.field("raw", pa.string(), nullable=False),
        ]
    return pa.schema(fields)


#: The public ids of one batch request: (submission_id, setting, question_id, check_id).
REQUEST_IDS = PAIR_KEY
_REQUEST = pa.struct([pa.field(n, pa.string(), nullable=False) for n in REQUEST_IDS])


def request_ids(
    submission_ids: Sequence[str],
    settings: Sequence[str],
    question_ids: Sequence[str],
    check_ids: Sequence[str],
) -> pa.StructArray:
    """The public ids of a batch's requests as one Arrow array (columnar: no object per
    request, which at paper scale is 380,730 of them)."""
    cols = [
        pa.array(list(c), pa.string()) for c in (submission_ids, settings, question_ids, check_ids)
    ]
    return pa.StructArray.from_arrays(cols, fields=list(_REQUEST))


#: No request ids (a state row that does not carry the keys); made of empty Arrow arrays, not
#: converted from Python objects (pyarrow imports pandas the first time it converts some).
NO_REQUESTS = pa.StructArray.from_arrays(
    [pa.nulls(0, pa.string()) for _ in REQUEST_IDS], fields=list(_REQUEST)
)

BATCH_SCHEMA = pa.schema(
    [
        pa.field("batch_id", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("judge_identity", pa.string(), nullable=False),
        pa.field("provider", pa.string(), nullable=False),
        pa.field("state", pa.string(), nullable=False),
        pa.field("n_requests", pa.int64(), nullable=False),
        pa.field("created_at", _TS, nullable=False),
        pa.field("updated_at", _TS, nullable=False),
        pa.field("input_file_ids", pa.list_(pa.string()), nullable=False),
        pa.field("output_file_ids", pa.list_(pa.string()), nullable=False),
        pa.field("keys", pa.list_(_KEY), nullable=False),
        pa.field("requests", pa.list_(_REQUEST), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
    ]
)
"""Columns of a batch-state shard: one row per (batch, state change). ``requests`` holds the
public ids of each key's (response, check), in the order of ``keys`` (on the rows that carry the
keys), so that any run can ingest a batch's results, whichever submissions it plans."""


def schema(kind: str, held: bool) -> pa.Schema:
    """The schema of a shard of ``kind``."""
    if kind == VERDICTS:
        return verdict_schema(held)
    if kind == FAILURES:
        return failure_schema(held)
    if kind == BATCHES:
        return BATCH_SCHEMA
    raise ValueError(f"unknown shard kind {kind!r} (one of {', '.join(KINDS)})")


def now() -> dt.datetime:
    """The current time, UTC, to the microsecond."""
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """One verdict for the ledger (``model``: the snapshot the provider reported; ``rationale``:
    kept only when rubrics are public)."""

    key: bytes
    judge_identity: str
    judge: str
    submission_id: str
    setting: str
    question_id: str
    check_id: str
    verdict: Verdict
    model: str = ""
    source: str = "direct"
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    calls: int = 1
    latency_s: float = 0.0
    rationale: str = ""
    created_at: dt.datetime = field(default_factory=now)


#: A verdict's values in the order of :func:`verdict_schema`'s columns, without ``created_at``
#: (the verdict as its code): what each store of verdicts writes.
verdict_values = attrgetter(
    *(
        "verdict.code" if f.name == "verdict" else f.name
        for f in verdict_schema(held=False)
        if f.name != "created_at"
    )
)


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One (response, check) that ended without a verdict; retried by the next run.

    ``message`` and ``raw`` are kept only in ledgers of public rubrics.
    """

    key: bytes
    judge_identity: str
    judge: str
    submission_id: str
    setting: str
    question_id: str
    check_id: str
    kind: str
    calls: int = 1
    message: str = ""
    raw: str = ""
    failed_at: dt.datetime = field(default_factory=now)


@dataclass(frozen=True, slots=True)
class BatchState:
    """A provider batch's state at one moment; the ledger keeps every change.

    ``keys`` are the verdict keys requested (usually on the first row only), ``requests`` their
    public ids; ``detail``: free JSON for the provider's extra fields, never request or reply text.
    """

    batch_id: str
    judge: str
    judge_identity: str
    provider: str
    state: str
    n_requests: int
    created_at: dt.datetime
    updated_at: dt.datetime = field(default_factory=now)
    input_file_ids: tuple[str, ...] = ()
    output_file_ids: tuple[str, ...] = ()
    keys: tuple[bytes, ...] = ()
    requests: pa.StructArray = field(default_factory=lambda: NO_REQUESTS, compare=False)
    detail: str = ""

    @property
    def custom_ids(self) -> list[str]:
        """The batch's request ids (one per key)."""
        return [custom_id(k) for k in self.keys]


def verdict_table(records: Sequence[VerdictRecord], held: bool) -> pa.Table:
    """Verdict records as a table of :func:`verdict_schema` (held: no rationale)."""
    return _table(records, verdict_schema(held))


def failure_table(records: Sequence[FailureRecord], held: bool) -> pa.Table:
    """Failure records as a table of :func:`failure_schema` (held: no message or raw)."""
    return _table(records, failure_schema(held))


def _table(records: Sequence[VerdictRecord | FailureRecord], schema: pa.Schema) -> pa.Table:
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for r in records:
        for name, values in cols.items():
            v = getattr(r, name)
            values.append(v.code if isinstance(v, Verdict) else v)
    return pa.table(cols, schema=schema)


def batch_table(states: Sequence[BatchState]) -> pa.Table:
    """Batch states as a table of :data:`BATCH_SCHEMA`."""
    cols: dict[str, Any] = {f.name: [] for f in BATCH_SCHEMA if f.name != "requests"}
    for s in states:
        for name, values in cols.items():
            v = getattr(s, name)
            values.append(list(v) if isinstance(v, tuple) else v)
    offsets = np.cumsum([0, *(len(s.requests) for s in states)], dtype=np.int32)
    values = pa.concat_arrays([NO_REQUESTS, *(s.requests for s in states)])
    cols["requests"] = pa.ListArray.from_arrays(pa.array(offsets), values)
    return pa.table([cols[f.name] for f in BATCH_SCHEMA], schema=BATCH_SCHEMA)


def batch_states(table: pa.Table) -> list[BatchState]:
    """Rows of a batch-state table as :class:`BatchState` values."""
    out = []
    requests = table.column("requests").combine_chunks()
    for i, row in enumerate(table.drop_columns(["requests"]).to_pylist()):
        for name in ("input_file_ids", "output_file_ids", "keys"):
            row[name] = tuple(row[name])
        out.append(BatchState(**row, requests=requests[i].values))
    return out


def verdict_word(code: int) -> Verdict:
    """The verdict of an integer code."""
    return VERDICT_ORDER[code]
