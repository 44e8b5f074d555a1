"""The verdict ledger (ARCHITECTURE.md, "The verdict ledger"): the store of record of every
verdict, failure and batch state, as append-only Parquet shards named by their bytes (their MAC
under the ledger secret when rubrics are held: :mod:`scoring.ledger.checks`), counted in the order
of :mod:`scoring.ledger.order` (pushed first, in commit order) and compacted by
:mod:`scoring.ledger.compact`.

The judge computes keys with :class:`KeyScheme` (keyed hashes when rubrics are held), finds what
is already judged with :meth:`Ledger.key_index`, and appends what it gets with
:meth:`Ledger.append_verdicts`. Batch runs record their batches with
:meth:`Ledger.append_batch_states` and read them back with :meth:`Ledger.latest_batch_states`;
a batch request's ``custom_id`` is :func:`custom_id` of its key.
"""

from scoring.errors import GamutError
from scoring.ledger.keys import (
    KEY_BYTES,
    KeyIndex,
    Keys,
    KeyScheme,
    custom_id,
    join_keys,
    key_bytes,
    key_from_custom_id,
    keys_array,
)
from scoring.ledger.order import PUSHES, PushRecord
from scoring.ledger.records import (
    BATCH_SCHEMA,
    BATCHES,
    FAILURES,
    KINDS,
    SOURCES,
    VERDICTS,
    BatchState,
    FailureRecord,
    VerdictRecord,
    failure_schema,
    verdict_schema,
    verdict_table,
)
from scoring.ledger.store import MANIFEST, Conflict, Ledger, MergeReport, key_column, merge

__all__ = [
    "BATCHES",
    "BATCH_SCHEMA",
    "FAILURES",
    "KEY_BYTES",
    "KINDS",
    "MANIFEST",
    "PUSHES",
    "SOURCES",
    "VERDICTS",
    "BatchState",
    "Conflict",
    "FailureRecord",
    "GamutError",
    "KeyIndex",
    "KeyScheme",
    "Keys",
    "Ledger",
    "MergeReport",
    "PushRecord",
    "VerdictRecord",
    "custom_id",
    "failure_schema",
    "join_keys",
    "key_bytes",
    "key_column",
    "key_from_custom_id",
    "keys_array",
    "merge",
    "verdict_schema",
    "verdict_table",
]
