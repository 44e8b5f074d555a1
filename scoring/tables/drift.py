"""Snapshot drift: a judge whose provider moved its model to a new snapshot. A calibration subset
of its pairs (the :data:`CALIBRATION_PAIRS` judged pairs with the smallest keys) is judged again
under a calibration identity (the judge's plus the new snapshot), and the two snapshots' verdicts
on it are compared: agreement, Cohen's kappa, mean check score (x100).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow.compute as pc

from scoring.judge.judges import BuiltJudge
from scoring.judge.pairs import PairPlan, pair_plans
from scoring.ledger import VERDICTS, KeyIndex, KeyScheme, Ledger, key_column
from scoring.tables.judges import cohen_kappa
from scoring.verdicts import Verdict

#: Pairs in the calibration subset of a judge.
CALIBRATION_PAIRS = 200


@dataclass(frozen=True)
class SnapshotChange:
    """A judge whose verdicts name more than one snapshot: the first and the latest seen."""

    judge: str
    identity: str
    old: str
    new: str

    def __str__(self) -> str:
        return (
            f"judge {self.judge}: the provider now reports model snapshot {self.new!r} "
            f"(earlier verdicts: {self.old!r}); see the judge_drift table"
        )


def snapshots(ledger: Ledger, identity: str) -> list[str]:
    """The snapshots named by the verdicts of ``identity``, in the order first seen."""
    seen: dict[str, None] = {}
    for name in ledger.shards_oldest_first(VERDICTS):
        t = ledger.read_shard(VERDICTS, name, ["judge_identity", "model"])
        t = t.filter(pc.equal(t["judge_identity"], identity))
        for m in pc.unique(t["model"]).to_pylist():
            if m:
                seen.setdefault(m, None)
    return list(seen)


def snapshot_change(ledger: Ledger, judge: BuiltJudge) -> SnapshotChange | None:
    """The judge's first and latest snapshot, when its verdicts name more than one."""
    seen = snapshots(ledger, judge.identity)
    if len(seen) < 2:
        return None
    return SnapshotChange(judge.name, judge.identity, seen[0], seen[-1])


def calibration_plan(
    plan: PairPlan, ledger: Ledger, change: SnapshotChange, scheme: KeyScheme
) -> tuple[PairPlan, npt.NDArray[np.int64]]:
    """The calibration subset of ``plan``: a plan of the calibration judge over the pairs that
    have a verdict of the old snapshot (the smallest keys first), and those pairs' rows in
    ``plan``."""
    t = ledger.verdicts(["key", "model"], [change.identity])
    old = t.filter(pc.equal(t["model"], change.old))
    found = KeyIndex(key_column(old["key"])).contains(plan) & ~plan.empty
    rows = np.flatnonzero(found)
    order = np.lexsort(plan.keys_of(rows).T[::-1])
    rows = np.sort(rows[order[:CALIBRATION_PAIRS]])
    units = sorted({int(u) for u in plan.unit[rows]})
    cal = dataclasses.replace(plan.judge, identity=f"{plan.judge.identity}#snapshot:{change.new}")
    sub = pair_plans([plan.units[u] for u in units], [cal], scheme)[0]
    where = {u: i for i, u in enumerate(units)}
    # a pair is (unit, the check's position among its unit's checks) in both plans
    pos = {(int(u), int(k)): i for i, (u, k) in enumerate(zip(sub.unit, sub.position, strict=True))}
    pick = np.array(
        [pos[(where[int(plan.unit[r])], int(plan.position[r]))] for r in rows], dtype=np.int64
    )
    return (
        dataclasses.replace(
            sub,
            unit=sub.unit[pick],
            check=sub.check[pick],
            position=sub.position[pick],
            empty=sub.empty[pick],
        ),
        rows,
    )


def compare(
    old: npt.NDArray[np.integer],
    new: npt.NDArray[np.integer],
    partial_credit: float,
    contradiction_penalty: float,
) -> dict[str, float | int]:
    """Agreement, Cohen's kappa and mean check scores (x100) of two verdict code arrays."""
    n = len(Verdict)
    confusion = np.bincount(old.astype(np.int64) * n + new, minlength=n * n).reshape(n, n)
    kappa, agreement, count = cohen_kappa(confusion)
    credit = np.array([1.0, partial_credit, 0.0, contradiction_penalty])  # in verdict code order
    old_score = 100 * float(credit[old].mean()) if count else float("nan")
    new_score = 100 * float(credit[new].mean()) if count else float("nan")
    return {
        "n_pairs": count,
        "agreement": agreement,
        "kappa": kappa,
        "old_score": old_score,
        "new_score": new_score,
        "score_diff": new_score - old_score,
    }


def drift_row(
    plan: PairPlan,
    cal: PairPlan,
    rows: npt.NDArray[np.int64],
    ledger: Ledger,
    change: SnapshotChange,
    partial_credit: float,
    contradiction_penalty: float,
) -> dict[str, object]:
    """One row of the ``judge_drift`` table: the two snapshots on the calibration pairs that
    both judged."""
    t = ledger.verdicts(["key", "verdict"], [change.identity, cal.judge.identity])
    index = KeyIndex(key_column(t["key"]))
    codes = t["verdict"].to_numpy()
    a, b = index.find(plan.keys_of(rows)), index.find(cal)
    both = (a >= 0) & (b >= 0)
    stats = compare(codes[a[both]], codes[b[both]], partial_credit, contradiction_penalty)
    return {"judge": change.judge, "old_snapshot": change.old, "new_snapshot": change.new, **stats}
