"""The verdicts and failures of one imported result file, gathered as rows and written to the ledger
as shards: the import's journal.

A file is ingested whole or not at all: its verdicts go into one atomically written shard, then
its failures into another, and lines that gave no verdict are journalled first (an ``imported``
batch-state row of line digests), so importing a file again counts no failure twice.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from scoring.judge.backends import Completion
from scoring.judge.batch.runner import Ingest
from scoring.judge.cache import MAX_RAW_CHARS, cap_raw
from scoring.judge.items import PairItem, Requested
from scoring.judge.judges import BuiltJudge
from scoring.judge.outcome import JudgeStats
from scoring.judge.progress import ProgressSink
from scoring.ledger import BatchState, FailureRecord, KeyIndex, Ledger, VerdictRecord, keys_array
from scoring.ledger.records import now, verdict_schema, verdict_values
from scoring.verdicts import Verdict

#: The verdict columns a row holds, in order (``created_at`` is the shard's write time).
_ROW = (
    "key",
    "judge_identity",
    "judge",
    "submission_id",
    "setting",
    "question_id",
    "check_id",
    "verdict",
    "model",
    "source",
    "tokens_in",
    "tokens_cached",
    "tokens_out",
    "calls",
    "latency_s",
    "rationale",
)


class ShardSink:
    """A :class:`scoring.judge.cache.VerdictSink` that keeps one file's verdicts (as rows of a
    verdict shard) and failures until :meth:`write`."""

    def __init__(self, held: bool) -> None:
        self.held = held
        self._schema = verdict_schema(held)
        self._rows: list[tuple[Any, ...]] = []
        self._failures: list[FailureRecord] = []

    def __len__(self) -> int:
        return len(self._rows)

    def put(self, r: VerdictRecord, *, commit: bool = True) -> bool:
        """Keep a verdict (``commit`` is meaningless here: :meth:`write` writes them all)."""
        self._rows.append(verdict_values(r))
        return True

    def add(
        self,
        item: PairItem | Requested,
        verdict: Verdict,
        comp: Completion,
        calls: int,
        source: str,
        rationale: str,
    ) -> None:
        """Keep a verdict without building its record: one row (what an import does 380,000
        times at paper scale)."""
        self._rows.append(
            (
                item.key,
                item.identity,
                *item.ids,
                verdict.code,
                comp.model,
                source,
                comp.tokens_in,
                comp.tokens_cached,
                comp.tokens_out,
                calls,
                0.0,
                rationale,
            )
        )

    def fail(self, r: FailureRecord) -> None:
        """Keep a failure (its raw reply capped as the working index caps it)."""
        self._failures.append(replace(r, raw=cap_raw(r.raw)) if len(r.raw) > MAX_RAW_CHARS else r)

    def write(self, ledger: Ledger, known: KeyIndex | None = None) -> list[str]:
        """Write the verdicts as one shard (stamped with this moment), then the failures as another;
        returns the names of the shards written (none for nothing) and starts afresh."""
        if known is not None and self._rows:
            new = ~known.contains(keys_array([r[0] for r in self._rows]))
            self._rows = [r for r, keep in zip(self._rows, new.tolist(), strict=True) if keep]
        n = len(self._rows)
        cols: list[Any] = list(zip(*self._rows, strict=True)) or [()] * len(_ROW)
        data = dict(zip(_ROW, cols, strict=True))
        at = np.datetime64(now().replace(tzinfo=None), "us")
        data["created_at"] = pa.array(np.full(n, at), pa.timestamp("us")).cast(
            self._schema.field("created_at").type
        )
        if self.held:
            del data["rationale"]
        table = pa.table({f: data[f] for f in self._schema.names}, schema=self._schema)
        names = [ledger.append_verdicts(table), ledger.append_failures(self._failures)]
        self._rows, self._failures = [], []
        return [n for n in names if n]


class ImportIngest(Ingest):
    """:class:`Ingest` for an imported file: its verdicts go to the file's :class:`ShardSink`
    as rows, without a record each."""

    def __init__(
        self,
        j: BuiltJudge,
        todo: dict[str, PairItem],
        sink: ShardSink,
        stats: JudgeStats,
        progress: ProgressSink,
    ) -> None:
        super().__init__(j, todo, sink, stats, progress)
        self.sink = sink
        self.source = "import"

    def verdict(
        self,
        item: PairItem | Requested,
        verdict: Verdict,
        comp: Completion,
        attempt: int,
        rationale: str,
    ) -> None:
        """Keep the verdict of ``item`` as a row of the file's shard."""
        self.sink.add(item, verdict, comp, attempt, self.source, rationale)


#: The state of a journal row of imported lines (final: never collected).
IMPORTED = "imported"


def line_digest(line_id: object, cid: str) -> str:
    """The digest that names one result line: of its own ``id`` and its ``custom_id``."""
    return hashlib.sha256(f"{line_id!r}\0{cid}".encode()).hexdigest()[:32]


def imported_lines(ledger: Ledger, identities: list[str]) -> dict[str, set[str]]:
    """The digests of every journalled line of these judge identities, by custom id."""
    out: dict[str, set[str]] = {}
    for s in ledger.batch_states(identities):
        if s.state != IMPORTED:
            continue
        try:
            lines = json.loads(s.detail).get("lines", [])
        except (json.JSONDecodeError, AttributeError):
            continue
        for cid, digest in zip(s.custom_ids, lines, strict=False):
            out.setdefault(cid, set()).add(str(digest))
    return out


def journal_lines(ledger: Ledger, j: BuiltJudge, lines: dict[bytes, str]) -> None:
    """Journal the lines (key -> line digest) of one file that gave ``j`` no verdict."""
    if not lines:
        return
    at = now()
    state = BatchState(
        batch_id=f"import-{secrets.token_hex(8)}",
        judge=j.name,
        judge_identity=j.identity,
        provider=j.config.provider,
        state=IMPORTED,
        n_requests=len(lines),
        created_at=at,
        keys=tuple(lines),
        detail=json.dumps({"lines": list(lines.values())}),
    )
    ledger.append_batch_states([state])
