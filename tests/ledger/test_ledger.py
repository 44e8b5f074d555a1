"""The verdict ledger on disk: shards, reading, batch states, merge, verify, keys, secrecy."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import GamutError
from scoring.judge.cache import digest as old_digest
from scoring.ledger import (
    BatchState,
    FailureRecord,
    KeyIndex,
    KeyScheme,
    Ledger,
    VerdictRecord,
    custom_id,
    join_keys,
    key_bytes,
    key_from_custom_id,
    keys_array,
    merge,
)
from scoring.ledger.keys import sort_key
from scoring.verdicts import Verdict

SECRET = "s" * 40
CHECK_TEXT = "Identifies the dish as pad thai."
RATIONALE = "The response names pad thai and its tamarind sauce."


def _key(scheme: KeyScheme, n: int) -> bytes:
    return scheme.digest("judge", "question", f"response {n}") + scheme.digest("fact", CHECK_TEXT)


def _verdict(scheme: KeyScheme, n: int, verdict: Verdict = Verdict.MEETS) -> VerdictRecord:
    return VerdictRecord(
        key=_key(scheme, n),
        judge_identity="jid",
        judge="j1",
        submission_id="m-one",
        setting="multimodal",
        question_id=f"food-{n:04d}",
        check_id="I1",
        verdict=verdict,
        model="judge-model-2026-01-01",
        rationale=RATIONALE,
    )


def test_shards_are_content_named_and_written_once(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path / "l", s, held=False)
    name = led.append_verdicts([_verdict(s, 1), _verdict(s, 2)])
    assert name is not None
    path = tmp_path / "l" / "verdicts" / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() + ".parquet" == name
    mtime = path.stat().st_mtime_ns
    assert led.append_verdicts([]) is None
    t = led.verdicts()
    assert t.num_rows == 2
    assert t["model"].to_pylist() == ["judge-model-2026-01-01"] * 2
    assert t["rationale"].to_pylist() == [RATIONALE] * 2
    # the same rows again: the same name, the file untouched
    rec = led.verdicts().to_pylist()
    assert len(rec) == 2
    assert path.stat().st_mtime_ns == mtime
    assert led.verify() == []


def test_key_index_finds_keys_and_first_verdict_wins(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    led.append_verdicts([_verdict(s, n) for n in range(50)])
    index, table = led.key_index()
    queries = keys_array([_key(s, 3), _key(s, 99), _key(s, 49)])
    rows = index.find(queries)
    assert rows[1] == -1 and rows[0] >= 0 and rows[2] >= 0
    assert table.column_names == ["verdict"]  # the keys are in the index
    stored = led.verdicts(["key"])["key"]  # the index's rows are the ledger's rows, in order
    assert stored[int(rows[0])].as_py() == _key(s, 3)
    assert index.contains(queries).tolist() == [True, False, True]


@functools.cache
def _sharing_a_mix() -> np.ndarray:
    """Distinct keys, each pair of rows (0 and 1, 2 and 3, ...) sharing a 32-bit sort key:
    found by a birthday search (300,000 random keys hold a few such pairs)."""
    rng = np.random.default_rng(11)
    keys = rng.integers(0, 256, size=(300_000, 32), dtype=np.uint8)
    mix = sort_key(keys)
    order = np.argsort(mix, kind="stable")
    same = np.flatnonzero(mix[order][1:] == mix[order][:-1])
    assert len(same), "no two of 300,000 random keys share a sort key: it is not 32 bits"
    pairs = keys[np.stack([order[same], order[same + 1]], axis=1).ravel()]
    assert len({bytes(k) for k in pairs}) == len(pairs)
    return pairs


def test_key_index_handles_keys_sharing_a_mix() -> None:
    # two keys with equal sort keys still resolve to their own rows
    a, b = _sharing_a_mix()[0:1], _sharing_a_mix()[1:2]
    assert sort_key(a) == sort_key(b)
    index = KeyIndex(np.concatenate([a, b, a]))
    assert index.find(np.concatenate([b, a])).tolist() == [1, 0]
    assert index.find(np.full((1, 32), 7, dtype=np.uint8)).tolist() == [-1]


@settings(max_examples=60)
@given(
    st.lists(st.integers(0, 40), max_size=60),
    st.lists(st.integers(0, 50), max_size=60),
)
def test_key_index_answers_like_a_dictionary(stored: list[int], asked: list[int]) -> None:
    # few distinct keys (so duplicates are common), some with equal mixes
    def key(n: int) -> bytes:
        if n % 3 == 0:
            pool = _sharing_a_mix()
            return bytes(pool[(n // 3) % len(pool)])
        raw = bytearray(32)
        raw[8] = n
        return bytes(raw)

    first: dict[bytes, int] = {}
    for row, n in enumerate(stored):
        first.setdefault(key(n), row)
    keys = keys_array([key(n) for n in stored]) if stored else np.empty((0, 32), np.uint8)
    queries = keys_array([key(n) for n in asked]) if asked else np.empty((0, 32), np.uint8)
    index = KeyIndex(keys)
    want = [first.get(key(n), -1) for n in asked]
    assert index.find(queries).tolist() == want
    # each stored row's first row of its key, runs of equal mixes shared by two keys included
    assert index.first_rows().tolist() == [first[key(n)] for n in stored]
    assert index.contains(queries).tolist() == [w >= 0 for w in want]


def test_key_index_answers_across_comparison_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoring.ledger.keys as keys_module

    monkeypatch.setattr(keys_module, "_FIND_CHUNK", 3)  # many slices, some holding collisions
    rng = np.random.default_rng(5)
    stored = rng.integers(0, 256, size=(40, 32), dtype=np.uint8)
    shared = _sharing_a_mix()[:10]
    stored[10 : 10 + len(shared)] = shared  # equal mixes for some pairs of rows
    stored[30] = stored[3]  # a duplicate: the first row wins
    index = KeyIndex(stored)
    queries = np.concatenate([stored[::-1], rng.integers(0, 256, size=(9, 32), dtype=np.uint8)])
    first = {bytes(k): i for i, k in reversed(list(enumerate(stored)))}
    assert index.find(queries).tolist() == [first.get(bytes(k), -1) for k in queries]


def test_a_ledger_keeps_its_key_index_until_a_shard_is_added(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    led.append_verdicts([_verdict(s, n) for n in range(5)])
    index, table = led.key_index()
    assert table.column_names == ["verdict"]
    again, _ = led.key_index()
    assert again is index  # the steps of one run share it
    wider, rows = led.key_index(columns=["verdict", "rationale"])
    assert wider is index and rows.column_names == ["verdict", "rationale"]
    keys = key_bytes(keys_array(led.verdicts(["key"])["key"].to_pylist()))
    assert index.find(keys_array(keys)).tolist() == list(range(5))  # the same rows, in order
    led.append_verdicts([_verdict(s, 7)])
    fresh, table = led.key_index()
    assert fresh is not index and table.num_rows == 6
    assert fresh.contains(keys_array([_key(s, 7)])).tolist() == [True]
    other, _ = led.key_index(identities=["another"])
    assert len(other) == 0


def test_a_long_run_of_one_sort_key_is_matched_by_whole_key() -> None:
    rng = np.random.default_rng(9)
    stored = rng.integers(0, 256, size=(60, 32), dtype=np.uint8)
    words = stored.view(np.uint64)
    words[:30, 2] = words[:30, 0]  # 30 keys sharing sort key 0
    stored[40] = stored[5]  # a duplicate: the first row wins
    assert (sort_key(stored[:30]) == 0).all()
    first = {bytes(k): i for i, k in reversed(list(enumerate(stored)))}
    queries = np.concatenate([stored[::-1], rng.integers(0, 256, size=(7, 32), dtype=np.uint8)])
    index = KeyIndex(stored)
    assert index.find(queries).tolist() == [first.get(bytes(k), -1) for k in queries]
    assert index.first_rows().tolist() == [first[bytes(k)] for k in stored]


def test_a_key_index_over_several_shards_has_their_rows_in_order(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    for part in range(4):  # one shard each; the first ones of the other identity
        rows = [_verdict(s, n) for n in range(part * 10, part * 10 + 10)]
        if part < 2:
            rows = [dataclasses.replace(r, judge_identity="other") for r in rows]
        led.append_verdicts(rows)
    assert len(led.shard_names("verdicts")) == 4
    for identities in (None, ["jid"], ["other"], ["nobody"]):
        index, table = led.key_index(identities, columns=["verdict", "question_id"])
        stored = led.verdicts(["key", "question_id"], identities)
        assert len(index) == table.num_rows == stored.num_rows
        assert table["question_id"].to_pylist() == stored["question_id"].to_pylist()
        keys = keys_array(stored["key"].to_pylist()) if stored.num_rows else np.empty((0, 32))
        assert index.find(keys.astype(np.uint8)).tolist() == list(range(stored.num_rows))


def test_the_key_index_holds_the_model_and_source_as_dictionaries(tmp_path: Path) -> None:
    """Read from each shard as codes over its values: the same values, row for row, whether the
    index is built with them or they are asked for after it was built."""
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    for part in range(3):
        model = f"judge-model-{part % 2}"
        led.append_verdicts(
            [
                dataclasses.replace(_verdict(s, n), model=model)
                for n in range(part * 5, part * 5 + 5)
            ]
        )
    stored = led.verdicts(["model", "source"])
    for first in (["verdict"], ["verdict", "model", "source"]):
        fresh = Ledger.open(tmp_path, s, held=False)
        fresh.key_index(columns=first)
        _, table = fresh.key_index(columns=["verdict", "model", "source"])
        for c in ("model", "source"):
            assert pa.types.is_dictionary(table.schema.field(c).type)
            assert table[c].to_pylist() == stored[c].to_pylist()
    assert set(stored["model"].to_pylist()) == {"judge-model-0", "judge-model-1"}


def test_a_broken_shard_is_named_when_the_index_is_asked_for(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    name = led.append_verdicts([_verdict(s, 1)])
    assert name is not None
    (tmp_path / "verdicts" / name).write_bytes(b"PAR1 not a shard")
    with pytest.raises(GamutError, match=re.escape(name)):
        led.key_index()


@pytest.mark.parametrize("secret_bytes", [32, 63, 64, 65, 200])
def test_bulk_digests_are_the_keyed_hash_of_each_row(secret_bytes: int) -> None:
    # the bulk path hashes the shared parts once and copies that state per row: it must give
    # the digests of whole messages, for a secret shorter than, as long as and longer than
    # SHA-256's 64-byte block
    import hmac

    def framed(parts: tuple[str, ...]) -> bytes:  # each part after its length, as keys.py does
        enc = [p.encode("utf-8", "surrogatepass") for p in parts]
        return b"".join(len(b).to_bytes(8, "little") + b for b in enc)

    secret = bytes(range(secret_bytes))
    rows = [("fact", "Names pad thai."), ("", "\u00e9t\u00e9 \ud800"), (), ("x" * 200,)]
    for scheme in (KeyScheme.keyed(secret), KeyScheme.public()):
        for lead in ((), ("identity",), ("a", "b")):
            got = [bytes(d) for d in scheme.digests(rows, lead)]
            assert got == [scheme.digest(*lead, *r) for r in rows]
            msgs = [framed((*lead, *r)) for r in rows]
            if scheme.held:  # under the key derived for verdict keys, not the secret itself
                k = hmac.new(secret, b"gamut ledger v2 verdict keys", hashlib.sha256).digest()
                want = [hmac.new(k, m, hashlib.sha256).digest()[:16] for m in msgs]
                assert got != [hmac.new(secret, m, hashlib.sha256).digest()[:16] for m in msgs]
            else:
                want = [hashlib.sha256(m).digest()[:16] for m in msgs]
            assert got == want


@pytest.mark.parametrize("held", [True, False])
def test_digests_of_hex_are_the_digests_of_each_rows_hex(held: bool) -> None:
    # a judge's unit digests hash the shared response digests' hex: the fast path must give
    # what the general one gives for the same rows
    scheme = KeyScheme.keyed(b"s" * 40) if held else KeyScheme.public()
    halves = np.frombuffer(hashlib.sha256(b"seed").digest() * 20, np.uint8).reshape(-1, 16)
    halves = halves[::-1].copy()  # rows that differ from their neighbours' order
    for lead in ((), ("judge identity",)):
        fast = scheme.digests_of_hex(halves, lead)
        slow = scheme.digests([(bytes(d).hex(),) for d in halves], lead)
        assert fast.shape == (40, 16) and np.array_equal(fast, slow)
    assert scheme.digests_of_hex(halves[:0]).shape == (0, 16)
    with pytest.raises(ValueError, match=r"\(n, 16\)"):
        scheme.digests_of_hex(halves.reshape(-1, 32))


def test_pair_keys_are_the_two_halves() -> None:
    s = KeyScheme.public()
    units = s.digests([("id", "q", "r1"), ("id", "q", "r2")])
    checks = s.digests([("fact", "a"), ("fact", "b")])
    keys = join_keys(units, checks, np.array([0, 1, 1]), np.array([1, 0, 1]))
    assert key_bytes(keys)[2] == s.digest("id", "q", "r2") + s.digest("fact", "b")
    assert len(set(key_bytes(keys))) == 3


def test_custom_id_round_trips_and_fits_anthropic() -> None:
    k = _key(KeyScheme.public(), 1)
    cid = custom_id(k)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cid)
    assert key_from_custom_id(cid) == k
    for bad in ["", "XYZ", cid.upper(), cid[:-1], cid + "0"]:
        with pytest.raises(ValueError):
            key_from_custom_id(bad)


def test_failures_are_superseded_by_a_verdict(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    v = _verdict(s, 1)
    f1 = FailureRecord(v.key, "jid", "j1", "m-one", "multimodal", "food-0001", "I1", "api_error")
    f2 = FailureRecord(_key(s, 2), "jid", "j1", "m-one", "multimodal", "food-0002", "I1", "x")
    led.append_failures([f1, f2])
    assert {f.question_id for f in led.failures()} == {"food-0001", "food-0002"}
    led.append_verdicts([v])
    assert [f.question_id for f in led.failures()] == ["food-0002"]
    assert led.failures(["other-judge"]) == []


def test_latest_batch_states(tmp_path: Path) -> None:
    led = Ledger.open(tmp_path, KeyScheme.public(), held=False)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    keys = (_key(KeyScheme.public(), 1), _key(KeyScheme.public(), 2))

    def st(bid: str, state: str, minutes: int, **kw: object) -> BatchState:
        return BatchState(
            bid, "j1", "jid", "openai", state, 2, t0, t0 + dt.timedelta(minutes=minutes), **kw
        )  # type: ignore[arg-type]

    led.append_batch_states([st("b1", "submitted", 0, keys=keys, input_file_ids=("file-1",))])
    led.append_batch_states([st("b1", "in_progress", 5), st("b2", "submitted", 1)])
    led.append_batch_states([st("b1", "completed", 9, output_file_ids=("file-9",))])
    latest = {b.batch_id: b for b in led.latest_batch_states()}
    assert latest["b1"].state == "completed"
    assert latest["b1"].keys == keys  # carried over from the first row
    assert latest["b1"].output_file_ids == ("file-9",)
    assert latest["b1"].custom_ids == [custom_id(k) for k in keys]
    assert latest["b2"].state == "submitted"
    assert led.latest_batch_states(["other"]) == []
    assert len(led.batch_states()) == 4
    assert led.verify() == []  # batch shards pass every check (their lists read as dictionaries)


def test_merge_of_diverged_ledgers_loses_nothing(tmp_path: Path) -> None:
    s = KeyScheme.public()
    a = Ledger.open(tmp_path / "a", s, held=False)
    b = Ledger.open(tmp_path / "b", s, held=False)
    a.append_verdicts([_verdict(s, n) for n in (1, 2)])
    b.append_verdicts([_verdict(s, n) for n in (2, 3)])  # 2 judged on both sides, same verdict
    b.append_failures([FailureRecord(_key(s, 4), "jid", "j1", "m", "text_only", "q", "I1", "x")])
    report = merge(a, b)
    assert report.n_copied == 2
    keys = set(a.verdicts(["key"])["key"].to_pylist())
    assert keys == {_key(s, n) for n in (1, 2, 3)}
    assert [f.key for f in a.failures()] == [_key(s, 4)]
    assert merge(a, b).n_copied == 0  # idempotent
    assert a.verify() == []


def test_merge_keeps_a_conflicting_verdict_aside_and_the_first_counts(tmp_path: Path) -> None:
    s = KeyScheme.public()
    a = Ledger.open(tmp_path / "a", s, held=False)
    b = Ledger.open(tmp_path / "b", s, held=False)
    a.append_verdicts([_verdict(s, 1), _verdict(s, 2)])
    late = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    b.append_verdicts(
        [dataclasses.replace(_verdict(s, n, v), created_at=late) for n, v in
         ((2, Verdict.CONTRADICTS), (3, Verdict.MEETS))]
    )  # fmt: skip
    report = merge(a, b)
    assert report.n_copied == 1 and report.duplicates == 1
    (c,) = report.examples
    assert (c.ours, c.theirs) == ("meets", "contradicts")
    assert "m-one/multimodal/food-0002/I1" in str(c) and "contradicts kept aside" in str(c)
    assert a.verdicts().num_rows == 4  # the duplicate is kept, in its shard
    index, table = a.key_index()
    row = int(index.find(keys_array([_key(s, 2)]))[0])
    assert table["verdict"][row].as_py() == Verdict.MEETS.code  # the older counts
    assert a.verify() == [] and a.duplicates()[0] == 1


def test_merge_refuses_another_key_scheme(tmp_path: Path) -> None:
    a = Ledger.open(tmp_path / "a", KeyScheme.keyed(SECRET), held=True)
    b = Ledger.open(tmp_path / "b", KeyScheme.keyed("t" * 40), held=True)
    with pytest.raises(GamutError, match="written under keys"):
        merge(a, b)
    with pytest.raises(GamutError, match="another ledger secret"):
        Ledger.open(tmp_path / "a", KeyScheme.keyed("t" * 40), held=True)
    with pytest.raises(GamutError, match="ledger_key_env"):
        Ledger.open(tmp_path / "c", KeyScheme.public(), held=True)


def test_verify_names_a_flipped_byte_a_foreign_shard_and_a_stray_file(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path / "l", s, held=False)
    name = led.append_verdicts([_verdict(s, n) for n in range(20)])
    assert name is not None
    other = Ledger.open(tmp_path / "other", KeyScheme.keyed(SECRET), held=True)
    foreign = other.append_verdicts([_verdict(KeyScheme.keyed(SECRET), 1)])
    assert foreign is not None
    (tmp_path / "l" / "verdicts" / foreign).write_bytes(
        (tmp_path / "other" / "verdicts" / foreign).read_bytes()
    )
    (tmp_path / "l" / "verdicts" / "notes.txt").write_text("hello")
    path = tmp_path / "l" / "verdicts" / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    problems = {Path(p.file).name: p.message for p in led.verify()}
    assert "do not match its name" in problems[name]
    assert "foreign shard" in problems[foreign]
    assert problems["notes.txt"] == "not a ledger shard"
    with pytest.raises(GamutError, match="cannot merge"):
        merge(Ledger.open(tmp_path / "fresh", s, held=False), led)


def test_a_key_judged_twice_in_one_ledger_is_a_duplicate_not_a_problem(tmp_path: Path) -> None:
    s = KeyScheme.public()
    led = Ledger.open(tmp_path, s, held=False)
    led.append_verdicts([_verdict(s, 1)])
    led.append_verdicts([_verdict(s, 1, Verdict.MISSING), _verdict(s, 2)])
    led.append_verdicts([_verdict(s, 1)])  # the same verdict again: no duplicate kept aside
    assert led.verify() == []
    n, (c,) = led.duplicates()
    assert n == 1 and "food-0001" in str(c) and (c.ours, c.theirs) == ("meets", "missing")


def test_held_ledger_holds_no_check_text_rationale_or_unkeyed_hash(tmp_path: Path) -> None:
    s = KeyScheme.keyed(SECRET)
    led = Ledger.open(tmp_path, s, held=True)
    v = _verdict(s, 1)
    led.append_verdicts([v])
    led.append_failures(
        [
            FailureRecord(
                v.key, "jid", "j1", "m", "text_only", "q", "I1", "rejected",
                message=f"400: prompt was {CHECK_TEXT}", raw=RATIONALE,
            )
        ]
    )  # fmt: skip
    assert "rationale" not in led.verdicts().column_names
    blob = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    public = KeyScheme.public()
    forbidden = {
        "check text": CHECK_TEXT.encode(),
        "rationale": RATIONALE.encode(),
        "message": b"prompt was",
        "sha256 of the check": hashlib.sha256(CHECK_TEXT.encode()).digest()[:16],
        "sha256 hex of the check": hashlib.sha256(CHECK_TEXT.encode()).hexdigest().encode(),
        "unkeyed check digest": public.digest("fact", CHECK_TEXT),
        "unkeyed check digest, old scheme": old_digest("fact", CHECK_TEXT).encode(),
        "the secret": SECRET.encode(),
    }
    found = [what for what, needle in forbidden.items() if needle in blob]
    assert found == []
    assert v.key[16:] in blob  # the keyed digest is there: the scan can see keys


def test_held_key_cannot_be_confirmed_without_the_secret() -> None:
    keyed, guess = KeyScheme.keyed(SECRET), KeyScheme.public()
    assert keyed.digest("fact", CHECK_TEXT) != guess.digest("fact", CHECK_TEXT)
    assert keyed.digest("fact", CHECK_TEXT) != KeyScheme.keyed("u" * 40).digest("fact", CHECK_TEXT)
    assert SECRET not in keyed.scheme_id and keyed.scheme_id.startswith("hmac-sha256-v2:")
    with pytest.raises(Exception, match="at least 32"):
        KeyScheme.keyed("short")


def test_shard_metadata_names_kind_and_scheme(tmp_path: Path) -> None:
    s = KeyScheme.keyed(SECRET)
    led = Ledger.open(tmp_path, s, held=True)
    name = led.append_verdicts([_verdict(s, 1)])
    meta = pq.ParquetFile(tmp_path / "verdicts" / str(name)).schema_arrow.metadata
    assert s.scheme_id.encode() in meta[b"gamut.ledger"]


def test_lock_refuses_a_second_writer(tmp_path: Path) -> None:
    led = Ledger.open(tmp_path, KeyScheme.public(), held=False)
    with led.lock(), pytest.raises(GamutError, match="another gamut judge"), led.lock():
        pass
    with led.lock():  # released
        pass


def test_held_check_digests_of_one_text_differ_across_questions() -> None:
    from scoring.compiler import Check, CheckKind
    from scoring.judge.pairs import CheckTable
    from scoring.rubric import Tier

    def check(qid: str) -> Check:
        return Check(qid, "I1", "I1", CheckKind.FACT, Tier.ANSWER_CRITICAL, False, CHECK_TEXT)

    def table() -> CheckTable:
        return CheckTable(
            [check("food-0001"), check("food-0002")],
            ["food-0001", "food-0002"],
            np.zeros(1, np.int64),
            np.zeros(1, np.int64),
        )

    keyed, public = KeyScheme.keyed(SECRET), KeyScheme.public()
    for by_ids in (False, True):
        held = table().digests(keyed, by_ids)
        assert bytes(held[0]) != bytes(held[1]), "a held ledger links equal check texts"
        assert bytes(held[0]) == keyed.digest("food-0001", "fact", CHECK_TEXT, *["I1"][:by_ids])
        shown = table().digests(public, by_ids)  # public keys are unchanged: texts are public
        assert bytes(shown[0]) == bytes(shown[1])
        assert bytes(shown[0]) == public.digest("fact", CHECK_TEXT, *["I1"][:by_ids])


def test_a_ledger_of_the_first_held_key_scheme_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "LEDGER.json").write_text(
        '{"format": 1, "scheme": "hmac-sha256:0123456789abcdef", "held": true}\n'
    )
    with pytest.raises(GamutError, match="held key scheme 1") as err:
        Ledger.open(tmp_path, KeyScheme.keyed(SECRET), held=True)
    assert "question id" in str(err.value) and "new [store] ledger folder" in str(err.value)


def test_push_records_chain_in_commit_order_the_same_whatever_the_listing() -> None:
    from scoring.ledger.order import PushRecord, chain, ranks

    def rec(name: str, after: str | None, *shards: str) -> PushRecord:
        return PushRecord(name, after, tuple(f"verdicts/{s}" for s in shards))

    r1 = rec("c", None, "s1", "s2")
    r2 = rec("a", "c", "s3")
    r3 = rec("b", "a", "s2", "s4")  # s2 is ordered by r1 already: the first record counts
    fork = rec("0", "c", "s5")  # two records after one: only a forger makes this; name decides
    dangling = rec("d", "z" * 64, "s6")  # after a record this ledger lacks: starts a chain
    records = [r3, fork, r1, dangling, r2]
    for listing in (records, records[::-1], sorted(records, key=lambda r: r.name)):
        assert [r.name for r in chain(listing)] == ["c", "d", "0", "a", "b"]
    rank = ranks(chain(records))
    assert sorted(rank, key=rank.__getitem__) == [
        f"verdicts/{s}" for s in ("s1", "s2", "s6", "s5", "s3", "s4")
    ]
