"""The SQLite working index: never overwrites, ships to the ledger, survives its own loss."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from scoring.errors import GamutError
from scoring.judge.cache import VerdictCache, digest, judge_identity
from scoring.ledger import FailureRecord, KeyScheme, Ledger, VerdictRecord
from scoring.verdicts import Verdict

KEY = b"k" * 32


def _rec(verdict: Verdict, key: bytes = KEY) -> VerdictRecord:
    return VerdictRecord(key, "J", "gpt", "alpha", "multimodal", "q1", "I1", verdict, "m-1")


def test_put_never_overwrites_and_flush_ships_once(tmp_path: Path) -> None:
    led = Ledger.open(tmp_path / "ledger", KeyScheme.public(), held=False)
    path = tmp_path / "v.sqlite"
    with VerdictCache(path, led) as c:
        c.fail(FailureRecord(KEY, "J", "gpt", "alpha", "multimodal", "q1", "I1", "bad_output"))
        assert c.put(_rec(Verdict.MEETS)) is True
        assert c.put(_rec(Verdict.CONTRADICTS)) is False  # the first verdict stands
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert db.execute("SELECT COUNT(*) FROM failures").fetchone()[0] == 0
        assert c.pending() == 1
        assert len(c.flush()) == 1
        assert c.pending() == 0 and c.flush() == []
    t = led.verdicts()
    assert t["verdict"].to_pylist() == [Verdict.MEETS.code]
    assert t["model"].to_pylist() == ["m-1"]


def test_flush_drops_what_the_ledger_already_has(tmp_path: Path) -> None:
    # a run killed after writing its shard but before clearing the index
    led = Ledger.open(tmp_path / "ledger", KeyScheme.public(), held=False)
    with VerdictCache(tmp_path / "v.sqlite", led) as c:
        c.put(_rec(Verdict.MEETS))
        led.append_verdicts([_rec(Verdict.MEETS)])
        c.put(_rec(Verdict.MISSING, b"x" * 32))
        c.flush()
    assert sorted(led.verdicts()["key"].to_pylist()) == [KEY, b"x" * 32]


def test_empty_or_corrupt_index_is_moved_aside_and_named(tmp_path: Path) -> None:
    led = Ledger.open(tmp_path / "ledger", KeyScheme.public(), held=False)
    path = tmp_path / "v.sqlite"
    with VerdictCache(path, led) as c:
        c.put(_rec(Verdict.MEETS))
        c.flush()
        for n in range(200):  # enough pages that overwriting the middle hits data
            c.put(_rec(Verdict.MEETS, n.to_bytes(32, "big")))
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    with VerdictCache(path, led) as c:
        assert len(c.notes) == 1 and "moved to v.sqlite.corrupt" in c.notes[0]
        assert "rebuilt from the ledger" in c.notes[0]
        assert c.pending() == 0
    assert (tmp_path / "v.sqlite.corrupt").exists()
    path.write_bytes(b"")
    with VerdictCache(path, led) as c:
        assert "empty (0 bytes)" in c.notes[0]
    assert led.verdicts().num_rows == 1  # the ledger is untouched


def test_keys_separate_their_parts() -> None:
    assert digest("ab", "c") != digest("a", "bc")
    a = judge_identity({"model": "m", "decoding": {"temperature": 0.0}})
    b = judge_identity({"model": "m", "decoding": {"temperature": 0.5}})
    assert a != b and len(a) == 32


def test_an_index_another_process_holds_is_left_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "database is locked" is no corruption: moving the file aside would pull the index from
    # under the process that holds it, and drop its verdicts not yet shipped
    import scoring.judge.cache as cache_module

    monkeypatch.setattr(cache_module, "OPEN_TIMEOUT_S", 0.1)
    led = Ledger.open(tmp_path / "ledger", KeyScheme.public(), held=False)
    path = tmp_path / "v.sqlite"
    with VerdictCache(path, led) as c:
        c.put(_rec(Verdict.MEETS))  # not shipped yet
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM meta WHERE k='nothing'")
    try:
        with pytest.raises(GamutError, match="another gamut command may be using it"):
            VerdictCache(path, led)
    finally:
        holder.rollback()
        holder.close()
    assert not (tmp_path / "v.sqlite.corrupt").exists()
    with VerdictCache(path, led) as c:
        assert c.notes == [] and c.pending() == 1  # the verdict is still there
