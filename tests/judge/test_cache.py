"""The SQLite verdict cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from scoring.errors import GamutError
from scoring.judge.cache import Ids, VerdictCache, digest, judge_identity

IDS = Ids("gpt", "alpha", "multimodal", "q1", "I1")


def test_put_get_fail_and_clear(tmp_path: Path) -> None:
    path = tmp_path / "c" / "v.sqlite"
    with VerdictCache(path) as c:
        c.fail("k1", "J", IDS, "bad_output", "no JSON", "prose here", 3)
        assert [f.raw for f in c.failures()] == ["prose here"]
        c.put("k1", "J", IDS, "meets", "ok", tokens_in=10, tokens_cached=4, tokens_out=2)
        assert c.get("k1") is not None and c.get("k1").verdict == "meets"  # type: ignore[union-attr]
        assert c.failures() == [] and c.keys("J") == {"k1"} and c.keys("other") == set()
        assert c.usage("J") == (1, 10, 4, 2)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with VerdictCache(path) as c:  # survives reopening
        assert c.verdicts("J")["k1"].rationale == "ok"


def test_wrong_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    VerdictCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET v='0' WHERE k='schema'")
    with pytest.raises(GamutError, match="move the file aside"):
        VerdictCache(path)


def test_keys_separate_their_parts() -> None:
    assert digest("ab", "c") != digest("a", "bc")
    a = judge_identity({"model": "m", "decoding": {"temperature": 0.0}})
    b = judge_identity({"model": "m", "decoding": {"temperature": 0.5}})
    assert a != b and len(a) == 32
