"""The verdict ledger (ARCHITECTURE.md, "The verdict ledger"): append-only Parquet shards of
verdicts, failures and batch states, named by their bytes (:mod:`scoring.ledger.checks`),
counted in the order of :mod:`scoring.ledger.order` and compacted by :mod:`scoring.ledger.compact`.
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
