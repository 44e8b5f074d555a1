"""Compaction: small pushed shards rewritten as few, every row (duplicates too) counting where it
did; an interrupted compaction changes nothing; `gamut ledger compact` and push's threshold."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from scoring.ledger import KeyScheme, Ledger, VerdictRecord, keys_array
from scoring.ledger.compact import compact, small_runs
from scoring.ledger.order import COMPACTIONS, compaction_bytes, record_name
from scoring.verdicts import Verdict

SECRET = "ledger-secret-for-tests-" + "0" * 20
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _rec(s: KeyScheme, n: int, verdict: Verdict, minute: int) -> VerdictRecord:
    return VerdictRecord(
        key=s.digest("jid", "q", f"r{n}") + s.digest("q", "fact", "t"),
        judge_identity="jid",
        judge="j1",
        submission_id="m",
        setting="multimodal",
        question_id=f"q{n:03d}",
        check_id="I1",
        verdict=verdict,
        created_at=T0 + dt.timedelta(minutes=minute),
    )


def _pushed_ledger(root: Path) -> tuple[Ledger, list[str]]:
    """A held ledger of 12 one- or two-row shards pushed in two pushes, in an order that is not
    their time order, and one unpushed shard; key 1 is judged three times (two verdicts)."""
    s = KeyScheme.keyed(SECRET)
    led = Ledger.open(root, s, held=True)
    paths = []
    for i in range(12):
        rows = [_rec(s, 10 + i, Verdict.MEETS, 100 - i)]
        if i in (2, 5, 9):  # key 1: meets (pushed first), then contradicts, then meets
            rows.append(_rec(s, 1, Verdict.CONTRADICTS if i == 5 else Verdict.MEETS, 100 - i))
        if i == 2:
            rows[-1] = _rec(s, 1, Verdict.MISSING, 100 - i)
        paths.append(f"verdicts/{led.append_verdicts(rows)}")
    first = led.add_push_record(None, paths[:7])
    led.add_push_record(first, paths[7:])
    led.append_verdicts([_rec(s, 1, Verdict.PARTIALLY_MEETS, 0), _rec(s, 99, Verdict.MEETS, 0)])
    return led, paths


def _answers(led: Ledger) -> dict[bytes, int]:
    keys = led.verdicts(["key"])["key"].to_pylist()
    index, table = led.key_index()
    rows = index.find(keys_array(keys))
    return {k: table["verdict"][int(r)].as_py() for k, r in zip(keys, rows, strict=True)}


def test_compaction_keeps_every_row_and_which_verdict_counts(tmp_path: Path) -> None:
    led, paths = _pushed_ledger(tmp_path)
    s = led.scheme
    before, dups = _answers(led), led.duplicates()
    assert before[_rec(s, 1, Verdict.MEETS, 0).key] == Verdict.MISSING.code  # pushed first
    assert dups[0] == 3  # contradicts, meets and the unpushed partially_meets kept aside
    rows = led.verdicts().num_rows
    report = compact(led)
    assert report.n_replaced == 12 and report.n_written == 1
    assert len(led.shard_names("verdicts")) == 2, "one compacted shard and the unpushed one"
    assert not any((tmp_path / p).exists() for p in paths), "the run's shards are removed here"
    assert led.verdicts().num_rows == rows, "every row kept, duplicates too"
    assert _answers(led) == before and led.duplicates() == dups
    assert led.verify() == []
    assert compact(led).n_replaced == 0, "nothing left to compact"


def test_a_run_stops_at_a_shard_this_ledger_lacks(tmp_path: Path) -> None:
    led, paths = _pushed_ledger(tmp_path)
    (tmp_path / paths[4]).unlink()  # pushed, but not here (its verdicts are elsewhere)
    assert small_runs(led, "verdicts") == [paths[:4], paths[5:]]
    compact(led)
    assert len(led.shard_names("verdicts")) == 3 and led.verify() == []


def test_an_interrupted_compaction_changes_nothing(tmp_path: Path) -> None:
    led, paths = _pushed_ledger(tmp_path)
    before = _answers(led)
    # the record was written, the process died before its shard: the record does not count
    missing = "verdicts/" + "e" * 64 + ".parquet"
    record = compaction_bytes("verdicts", [missing], paths[:3])
    (tmp_path / COMPACTIONS).mkdir()
    (tmp_path / COMPACTIONS / record_name(record, led.scheme)).write_bytes(record)
    assert led.verify() == []
    assert _answers(led) == before and led.verdicts().num_rows == 15 + 2
    # a record of a run that is not contiguous in the pushed order never counts either
    odd = compaction_bytes("verdicts", [paths[0]], [paths[1], paths[3]])
    (tmp_path / COMPACTIONS / record_name(odd, led.scheme)).write_bytes(odd)
    assert _answers(led) == before and led.verdicts().num_rows == 17
    assert compact(led).n_replaced == 12
    assert _answers(led) == before


def test_cli_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from gamut.cli import main
    from tests.hub.conftest import write_config

    monkeypatch.setenv("GAMUT_LEDGER_KEY", SECRET)
    cfg = write_config(
        tmp_path, "rubrics", extra='\n[store]\nledger_key_env = "GAMUT_LEDGER_KEY"\n'
    )
    _pushed_ledger(tmp_path / ".gamut" / "ledger")
    result = CliRunner().invoke(main, ["ledger", "compact", "--config", str(cfg)])
    assert result.exit_code == 0 and "compacted 12 shard(s) into 1" in result.output
    result = CliRunner().invoke(main, ["ledger", "compact", "--config", str(cfg)])
    assert result.exit_code == 0 and "no run of small pushed shards" in result.output
    result = CliRunner().invoke(main, ["ledger", "verify", "--config", str(cfg)])
    assert result.exit_code == 0 and "3 duplicate verdict(s) kept aside" in result.output
