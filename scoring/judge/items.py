"""What the direct and the batch runner share: the pairs to judge as items, and how a verdict or
a failure of one is recorded (a leaf beside both runners, which import it and not each other).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.judge.cache import Ids, VerdictSink
from scoring.judge.judges import BuiltJudge
from scoring.judge.outcome import Failure, JudgeStats, held_message
from scoring.judge.pairs import PairPlan
from scoring.ledger import FailureRecord, VerdictRecord, key_bytes


@dataclass(frozen=True, slots=True)
class PairItem:
    """One pair to judge: its plan, its position in the plan, its verdict key and its ids."""

    plan: PairPlan
    pair: int
    key: bytes
    ids: Ids

    @property
    def identity(self) -> str:
        """The judge identity its verdict is stored under."""
        return self.plan.judge.identity


@dataclass(frozen=True, slots=True)
class Requested:
    """A request that a batch record names but this run does not plan (another run's): stored like a
    :class:`PairItem`'s, never asked again from here."""

    key: bytes
    identity: str
    ids: Ids


def pair_items(plan: PairPlan, todo: npt.NDArray[np.int64]) -> list[PairItem]:
    """The items of the pairs ``todo`` of ``plan``."""
    if not len(todo):  # every pair has its verdict (a cached run): no ids to gather
        return []
    name = plan.judge.name
    # each unit's and check's ids once, then the pairs' as plain list lookups
    unit_ids = [(u.submission_id, u.setting.value, u.question_id) for u in plan.units]
    check_ids = [c.check_id for c in plan.table.checks]
    out = []
    for i, u, c, key in zip(
        todo.tolist(),
        plan.unit[todo].tolist(),
        plan.check[todo].tolist(),
        key_bytes(plan.keys_of(todo)),
        strict=True,
    ):
        sid, setting, qid = unit_ids[u]
        out.append(PairItem(plan, i, key, Ids(name, sid, setting, qid, check_ids[c])))
    return out


def verdict_record(item: PairItem | Requested, **kw: object) -> VerdictRecord:
    """The ledger record of ``item``'s verdict (``kw``: the verdict and what came with it)."""
    return VerdictRecord(item.key, item.identity, *item.ids, **kw)  # type: ignore[arg-type]


def record_failure(
    j: BuiltJudge,
    item: PairItem | Requested,
    cache: VerdictSink,
    stats: JudgeStats | None,
    kind: str,
    message: str,
    raw: str,
    calls: int,
) -> None:
    """Record that ``item`` failed for good in this run (key redacted), in direct or batch mode;
    listed in ``stats`` unless None (another run's request, recorded for the ledger only)."""
    if cache.held:  # the one choke point: held words never reach ledger, index, report or log
        message, raw = held_message(kind, message), ""
    else:
        message, raw = j.backend.redact(message), j.backend.redact(raw)
    cache.fail(FailureRecord(item.key, j.identity, *item.ids, kind, calls, message, raw))
    if stats is not None:
        stats.failures.append(Failure(*item.ids, kind, message, raw))
