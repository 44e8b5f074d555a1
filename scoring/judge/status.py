"""How far judging is, per submission: checks, verdicts, requests in flight, failures."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from scoring.judge.batch.book import BatchBook
from scoring.judge.cache import VerdictCache
from scoring.judge.pairs import PairPlan
from scoring.ledger import KeyIndex, Ledger, keys_array


@dataclass
class SubmissionStatus:
    """One submission over every judge: (judge, response, check) triples."""

    checks: int = 0
    done: int = 0
    in_flight: int = 0
    failed: int = 0


@dataclass
class JudgingStatus:
    """Per submission id."""

    submissions: dict[str, SubmissionStatus] = field(default_factory=dict)

    def to_json(self) -> str:
        """``{"submissions": {id: {"checks", "done", "in_flight", "failed"}}}``."""
        body = {"submissions": {k: asdict(v) for k, v in sorted(self.submissions.items())}}
        return json.dumps(body, indent=1) + "\n"


def _index(keys: Sequence[bytes]) -> KeyIndex:
    return KeyIndex(keys_array(list(keys)) if keys else np.empty((0, 32), np.uint8))


def judging_status(plans: Sequence[PairPlan], ledger: Ledger, cache_path: Path) -> JudgingStatus:
    """Count, per submission, the checks of every judge and where each stands. An empty
    response's checks count as done (they get ``missing`` without a call)."""
    out = JudgingStatus()
    book = BatchBook(ledger)
    known, _ = ledger.key_index()
    with VerdictCache(cache_path, ledger) as cache:
        pending = cache.pending_index()
    for p in plans:
        j = p.judge
        done = known.contains(p) | pending.contains(p) | p.empty
        flying = _index([k for r in book.open_batches(j.identity) for k in r.keys])
        air = flying.contains(p) & ~done
        failed = _index([f.key for f in ledger.failures([j.identity])]).contains(p)
        failed &= ~done & ~air
        subs = np.array([u.submission_id for u in p.units], dtype=object)[p.unit]
        names, inv = np.unique(subs, return_inverse=True)
        for i, name in enumerate(names.tolist()):
            s = out.submissions.setdefault(str(name), SubmissionStatus())
            mine = inv == i
            s.checks += int(mine.sum())
            s.done += int((done & mine).sum())
            s.in_flight += int((air & mine).sum())
            s.failed += int((failed & mine).sum())
    return out
