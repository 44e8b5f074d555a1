"""An imported file's journal (``scoring/judge/batch/shard.py``): its verdicts as one ledger
shard, then its failures as another, in a real ledger folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.judge.batch.shard import ShardSink
from scoring.judge.cache import MAX_RAW_CHARS
from scoring.ledger import FailureRecord, KeyIndex, KeyScheme, Ledger, VerdictRecord, keys_array
from scoring.verdicts import Verdict
from tests.judge.project import LEDGER_KEY


def _verdict(n: int) -> VerdictRecord:
    return VerdictRecord(
        bytes([n]) * 32, "judge-id", "gpt", "sub", "text_only", f"q{n}", "I1.m1",
        Verdict.MISSING, model="m", source="import", tokens_in=7, rationale=f"why {n}",
    )  # fmt: skip


@pytest.mark.parametrize("held", [False, True])
def test_a_file_is_one_verdict_shard_then_one_failure_shard(tmp_path: Path, held: bool) -> None:
    scheme = KeyScheme.keyed(LEDGER_KEY) if held else KeyScheme.public()
    ledger = Ledger.open(tmp_path / "ledger", scheme, held=held)
    sink = ShardSink(held)
    assert sink.write(ledger) == []  # nothing: no shard
    for n in (1, 2, 3):
        sink.put(_verdict(n))
    raw = "x" * (MAX_RAW_CHARS + 10)
    sink.fail(FailureRecord(bytes([9]) * 32, "judge-id", "gpt", "sub", "text_only", "q9",
                            "I1.m1", "bad_output", 1, "unusable", raw))  # fmt: skip
    known = KeyIndex(keys_array([bytes([2]) * 32]))  # the ledger had this key already
    names = sink.write(ledger, known)
    assert len(names) == 2 and len(sink) == 0
    assert ledger.shard_names("verdicts") == [names[0]]
    rows = ledger.verdicts().to_pylist()
    assert [r["key"][0] for r in rows] == [1, 3]  # the known key is not written twice
    assert all(r["verdict"] == Verdict.MISSING.code and r["source"] == "import" for r in rows)
    assert ("rationale" in rows[0]) is not held  # held rubrics: no free text
    (failure,) = ledger.failures()
    assert failure.kind == "bad_output" and failure.calls == 1
    if held:
        assert failure.message == failure.raw == ""
    else:
        assert failure.raw.endswith(" [cut]") and len(failure.raw) < len(raw)
