"""`gamut ledger pull | push | merge | verify` through the fake hub, over real HTTP."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from gamut.cli import main
from gamut.ledger_hub import PUSH_BACKOFF_S, pull, push
from scoring.errors import GamutError
from scoring.ledger import KeyScheme, Ledger, VerdictRecord, keys_array
from scoring.ledger.store import shard_bytes
from scoring.verdicts import Verdict
from tests.hub.conftest import LEDGER_REPO as REPO
from tests.hub.conftest import LEDGER_SECRET as SECRET
from tests.hub.conftest import TOKEN, write_config
from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha

MANIFEST = "LEDGER.json"

CHECK_TEXT = "Identifies the dish as pad thai."


def _records(
    scheme: KeyScheme, start: int, n: int, verdict: Verdict = Verdict.MEETS
) -> list[VerdictRecord]:
    return [
        VerdictRecord(
            key=scheme.digest("jid", "q", f"response {i}") + scheme.digest("fact", CHECK_TEXT),
            judge_identity="jid",
            judge="j1",
            submission_id="m-one",
            setting="multimodal",
            question_id=f"food-{i:04d}",
            check_id="I1",
            verdict=verdict,
            model="judge-2026-01-01",
        )
        for i in range(start, start + n)
    ]


def _ledger(root: Path, held: bool = True) -> Ledger:
    scheme = KeyScheme.keyed(SECRET) if held else KeyScheme.public()
    return Ledger.open(root, scheme, held=held)


def _files(led: Ledger) -> dict[str, bytes]:
    return {
        str(p.relative_to(led.root)): p.read_bytes()
        for p in sorted(led.root.rglob("*.parquet"))
        if not any(part.startswith(".") for part in p.relative_to(led.root).parts)
    }


def _pushes(led: Ledger) -> list[str]:
    """The paths of ``led``'s push records."""
    return [f"pushes/{n}" for n in led.record_names()]


def _shards_added(added: list[str]) -> list[str]:
    """The shard paths of a commit's additions, after checking it adds one push record."""
    assert sum(p.startswith("pushes/") for p in added) == 1, added
    return [p for p in added if not p.startswith("pushes/")]


def _commits(hub: FakeHub) -> int:
    return sum(1 for r in hub.requests if r.method == "POST" and "/commit/" in r.path)


def test_push_then_pull_into_an_empty_ledger_gives_identical_shards(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a = _ledger(tmp_path / "a")
    a.append_verdicts(_records(a.scheme, 0, 20))
    a.append_verdicts(_records(a.scheme, 20, 5, Verdict.MISSING))
    report = push(a, REPO)
    assert len(report.sent) == 2 and report.commit_url is not None
    assert _commits(ledger_hub) == 1
    repo = ledger_hub.repos[REPO]
    assert repo.log[-1][3] == [], "a push deletes nothing"
    assert "LEDGER.json" in repo.commits[repo.branches["main"]]

    b = _ledger(tmp_path / "b")
    got = pull(b, REPO)
    assert sorted(got.ingested) == sorted([*_files(a), *_pushes(a)]) and not got.refused
    assert _pushes(a) == _pushes(b) and len(_pushes(a)) == 1
    assert _files(b) == _files(a)
    assert b.verify() == []
    assert b.verdicts().num_rows == 25
    # nothing new on either side: a second push makes no commit, a second pull ingests nothing
    assert push(a, REPO).commit_url is None
    assert push(b, REPO).sent == []
    assert _commits(ledger_hub) == 1
    assert pull(b, REPO).ingested == []


def test_push_sends_only_missing_shards_and_keeps_remote_ones(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    a.append_verdicts(_records(a.scheme, 0, 3))
    push(a, REPO)
    b.append_verdicts(_records(b.scheme, 100, 3))
    report = push(b, REPO)
    assert len(report.sent) == 1
    repo = ledger_hub.repos[REPO]
    head = repo.commits[repo.branches["main"]]
    assert set(_files(a)) | set(_files(b)) <= set(head)
    _, _, added, deleted = repo.log[-1]
    assert _shards_added(added) == report.sent and deleted == []
    # a pull into a brings b's shard; the two ledgers are now the same
    pull(a, REPO)
    assert _files(a) == {**_files(a), **_files(b)}
    assert set(_files(a)) | set(_pushes(a)) == set(head) - {"LEDGER.json"}


def _upload(led: Ledger, *names: str, manifest: bool = True) -> dict[str, bytes]:
    """What another push of ``led`` lands: the shards ``names`` (none named: all), and its
    manifest unless the dataset has it already."""
    shards = {k: v for k, v in _files(led).items() if not names or k.split("/")[1] in names}
    return {MANIFEST: (led.root / MANIFEST).read_bytes(), **shards} if manifest else shards


def _lands_first(hub: FakeHub, *pushes: dict[str, bytes]) -> None:
    """Before each of the next commit requests, another push lands ``pushes[i]`` (in order)."""
    queue = list(pushes)

    def land(repo_id: str, repo: FakeRepo) -> None:
        if queue:
            repo.land("main", queue.pop(0), summary="another push")

    hub.before_commit = land


def _added(hub: FakeHub) -> Counter[str]:
    """How many commits added each path."""
    return Counter(p for _, _, added, _ in hub.repos[REPO].log for p in added)


def _head(hub: FakeHub) -> dict[str, bytes]:
    repo = hub.repos[REPO]
    return repo.commits[repo.branches["main"]]


def test_a_push_that_meets_another_push_reads_again_and_commits_only_its_own_shards(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    a.append_verdicts(_records(a.scheme, 0, 3))
    b.append_verdicts(_records(b.scheme, 100, 3))
    own = sorted(_files(a))
    _lands_first(ledger_hub, _upload(b))
    waits: list[float] = []
    report = push(a, REPO, sleep=waits.append)
    assert report.attempts == 2 and report.commit_url is not None
    assert report.sent == own and report.remote_shards == 1
    assert report.ingested == sorted(_files(b)), "the retry pulled the other push's shard first"
    assert waits == [PUSH_BACKOFF_S]
    assert _commits(ledger_hub) == 2, "one commit refused with 412, one accepted"
    log = ledger_hub.repos[REPO].log
    assert log[0][1] == "another push" and log[0][2] == list(_upload(b))
    assert _shards_added(log[-1][2]) == report.sent, "no manifest: the other push added it"
    (record,) = a.push_records()
    assert record.after is None and list(record.shards) == [*_files(b), *own]
    want = {MANIFEST, *_files(a), *_files(b), *_pushes(a)}
    assert set(_head(ledger_hub)) == want
    assert set(_added(ledger_hub)) == want and set(_added(ledger_hub).values()) == {1}


def test_a_head_that_moves_at_every_attempt_fails_naming_the_attempts_and_writes_nothing(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    a.append_verdicts(_records(a.scheme, 0, 3))
    own = sorted(_files(a))
    names = [b.append_verdicts(_records(b.scheme, 100 * i, 2)) for i in (1, 2, 3)]
    assert None not in names
    _lands_first(
        ledger_hub,
        *(_upload(b, n, manifest=i == 0) for i, n in enumerate(names) if n is not None),
    )
    waits: list[float] = []
    with pytest.raises(GamutError, match="before each of 3 commit attempts") as err:
        push(a, REPO, sleep=waits.append)
    assert "nothing was pushed" in str(err.value) and "`gamut ledger push` again" in str(err.value)
    assert waits == [PUSH_BACKOFF_S, 2 * PUSH_BACKOFF_S]
    assert _commits(ledger_hub) == 3
    log = ledger_hub.repos[REPO].log
    assert [summary for _, summary, _, _ in log] == ["another push"] * 3
    assert not set(own) & set(_head(ledger_hub)), "none of a's shards reached the dataset"
    assert a.record_names() == [], "no record of a push that did not land"
    assert set(_added(ledger_hub).values()) == {1}
    # the other pushes are done: the next push goes through at its first attempt
    again = push(a, REPO, sleep=waits.append)
    assert again.attempts == 1 and again.sent == own
    assert set(_head(ledger_hub)) == {MANIFEST, *_files(a), *_files(b), *_pushes(a)}


def test_a_retry_sends_only_the_shards_the_other_push_did_not(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a = _ledger(tmp_path / "a")
    first = [a.append_verdicts(_records(a.scheme, 10 * i, 2)) for i in range(3)]
    assert None not in first
    # another holder of the same verdicts pushed two of the three shards first
    _lands_first(ledger_hub, _upload(a, *(n for n in first[:2] if n is not None)))
    report = push(a, REPO, sleep=lambda s: None)
    assert report.attempts == 2 and report.sent == [f"verdicts/{first[2]}"]
    assert _shards_added(ledger_hub.repos[REPO].log[-1][2]) == report.sent
    assert set(_added(ledger_hub).values()) == {1}, "no shard sent twice"
    assert set(_head(ledger_hub)) == {MANIFEST, *_files(a), *_pushes(a)}
    # ... or every shard this push lacks: the retry finds nothing to send and makes no commit
    last = a.append_verdicts(_records(a.scheme, 50, 2))
    assert last is not None
    _lands_first(ledger_hub, _upload(a, last, manifest=False))
    commits = _commits(ledger_hub)
    report = push(a, REPO, sleep=lambda s: None)
    assert report.attempts == 2 and report.sent == [] and report.commit_url is None
    assert _commits(ledger_hub) == commits + 1, "only the refused commit"
    assert set(_added(ledger_hub).values()) == {1}


def test_a_retry_checks_the_manifest_another_push_added(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a = _ledger(tmp_path / "a")
    a.append_verdicts(_records(a.scheme, 0, 2))
    other = _ledger(tmp_path / "other", held=False)  # another key scheme
    other.append_verdicts(_records(other.scheme, 0, 2))
    _lands_first(ledger_hub, _upload(other))
    with pytest.raises(GamutError, match="another ledger"):
        push(a, REPO, sleep=lambda s: None)
    assert set(_head(ledger_hub)) == set(_upload(other))


def test_pull_names_and_skips_a_corrupted_or_foreign_shard(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    src = _ledger(tmp_path / "src")
    good = src.append_verdicts(_records(src.scheme, 0, 4))
    other = _ledger(tmp_path / "other", held=False)  # another key scheme
    foreign = other.append_verdicts(_records(other.scheme, 0, 4))
    assert good is not None and foreign is not None
    push(src, REPO)
    repo = ledger_hub.repos[REPO]
    files = dict(repo.commits[repo.branches["main"]])
    broken = bytearray((src.root / "verdicts" / good).read_bytes())
    broken[len(broken) // 2] ^= 0xFF
    bad_name = "0" * 64 + ".parquet"
    files[f"verdicts/{bad_name}"] = bytes(broken)
    files[f"verdicts/{foreign}"] = (other.root / "verdicts" / foreign).read_bytes()
    files["notes.txt"] = b"not a shard"
    sha = commit_sha(files, "x")
    repo.commits[sha] = files
    repo.branches["main"] = sha

    dest = _ledger(tmp_path / "dest")
    report = pull(dest, REPO)
    assert report.ingested == sorted([f"verdicts/{good}", *_pushes(src)])
    refused = "\n".join(str(p) for p in report.refused)
    assert bad_name in refused and "not authenticated" in refused
    assert foreign in refused and "foreign" in refused
    assert "notes.txt" in refused
    assert sorted(_files(dest)) == [f"verdicts/{good}"]
    assert dest.verify() == []


def test_pull_names_and_drops_a_held_shard_rewritten_and_renamed_by_its_sha256(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    src = _ledger(tmp_path / "src")
    good = src.append_verdicts(_records(src.scheme, 0, 4))
    assert good is not None
    push(src, REPO)
    t = src.read_shard("verdicts", good)
    forged = shard_bytes(
        t.set_column(
            7, t.schema.field("verdict"), pa.array([Verdict.CONTRADICTS.code] * 4, pa.int8())
        ),
        "verdicts",
        src.scheme,
        held=True,
    )
    path = f"verdicts/{hashlib.sha256(forged).hexdigest()}.parquet"
    ledger_hub.repos[REPO].land("main", {path: forged}, summary="a forger with write access")
    dest = _ledger(tmp_path / "dest")
    report = pull(dest, REPO)
    (refused,) = report.refused
    assert refused.file.endswith(path) and "not authenticated" in refused.message
    assert sorted(_files(dest)) == [f"verdicts/{good}"] and dest.verify() == []
    assert set(dest.verdicts()["verdict"].to_pylist()) == {Verdict.MEETS.code}


def test_a_forged_push_record_is_named_and_dropped_and_orders_nothing(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    a.append_verdicts(_records(a.scheme, 0, 2, Verdict.MEETS))
    clash = b.append_verdicts(_records(b.scheme, 0, 2, Verdict.CONTRADICTS))
    push(a, REPO)
    push(b, REPO)  # a's verdicts count: pushed first
    # a forger with write access (no secret) adds a record ordering b's shard first
    forged = json.dumps({"format": 1, "after": None, "shards": [f"verdicts/{clash}"]}).encode()
    path = f"pushes/{hashlib.sha256(forged).hexdigest()}.json"
    ledger_hub.repos[REPO].land("main", {path: forged}, summary="a forger")
    c = _ledger(tmp_path / "c")
    report = pull(c, REPO)
    (refused,) = report.refused
    assert refused.file.endswith(path) and "push record not authenticated" in refused.message
    key = _records(c.scheme, 0, 1)[0].key
    assert _verdict_of(c, key) == Verdict.MEETS.code
    # dropped into a ledger by hand, it is named by verify and still orders nothing
    (c.root / path).write_bytes(forged)
    (problem,) = c.verify()
    assert problem.file == str(c.root / path) and "not authenticated" in problem.message
    assert _verdict_of(c, key) == Verdict.MEETS.code


def _verdict_of(led: Ledger, key: bytes) -> int:
    index, table = led.key_index()
    row = int(index.find(keys_array([key]))[0])
    assert row >= 0
    return int(table["verdict"][row].as_py())


def test_the_verdict_pushed_first_counts_everywhere_and_the_other_is_kept_aside(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    # b judged the key first, but a pushes first: commit order decides, not the judging time
    early = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    b.append_verdicts(
        [
            dataclasses.replace(r, created_at=early)
            for r in _records(b.scheme, 0, 2, Verdict.MISSING)
        ]
    )
    a.append_verdicts(_records(a.scheme, 1, 3, Verdict.MEETS))  # key 1 in both
    key = _records(a.scheme, 1, 1)[0].key
    assert push(a, REPO).duplicates == 0
    report = push(b, REPO)  # b pulls a's shard first: b's verdict of key 1 is a duplicate
    assert report.commit_url is not None and report.duplicates == 1
    assert report.ingested == sorted([*_files(a), *_pushes(a)])
    again = pull(a, REPO)
    c = _ledger(tmp_path / "c")
    fresh = pull(c, REPO)
    for led, got in ((a, again), (b, report), (c, fresh)):
        assert got.duplicates == 1 and not got.refused
        assert _verdict_of(led, key) == Verdict.MEETS.code
        assert led.verdicts().num_rows == 5  # the duplicate is kept, never deleted
        assert led.verify() == []
    assert [r.name for r in a.push_records()] == [r.name for r in c.push_records()]
    assert len(c.push_records()) == 2 and c.push_records()[1].after == c.push_records()[0].name


def test_a_push_that_lost_the_race_counts_the_other_verdict(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a, b = _ledger(tmp_path / "a"), _ledger(tmp_path / "b")
    a.append_verdicts(_records(a.scheme, 0, 2, Verdict.MEETS))
    b.append_verdicts(_records(b.scheme, 0, 1, Verdict.CONTRADICTS))
    key = _records(a.scheme, 0, 1)[0].key
    _lands_first(
        ledger_hub, _upload(b)
    )  # b's shard lands (with no record) between a's read and commit
    report = push(a, REPO, sleep=lambda s: None)
    assert report.attempts == 2 and report.duplicates == 1
    assert _verdict_of(a, key) == Verdict.CONTRADICTS.code  # landed first: it counts
    c = _ledger(tmp_path / "c")
    assert pull(c, REPO).duplicates == 1
    assert _verdict_of(c, key) == Verdict.CONTRADICTS.code
    (record,) = c.push_records()  # a's push ordered the shard it found before its own
    assert list(record.shards) == [*_files(b), *(p for p in _files(a) if p not in _files(b))]


def test_two_runner_processes_pushing_conflicting_verdicts_agree_after_pulls(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    runners = {}
    for name, verdict in (("r1", Verdict.MEETS), ("r2", Verdict.CONTRADICTS)):
        cfg = _config(tmp_path / name)
        led = _ledger(tmp_path / name / ".gamut" / "ledger")
        clash = led.append_verdicts(_records(led.scheme, 0, 3, verdict))
        led.append_verdicts(_records(led.scheme, 10 if name == "r1" else 20, 2))
        runners[name] = (cfg, led, f"verdicts/{clash}", verdict)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gamut", "ledger", "push", "--config", str(cfg)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for cfg, *_ in runners.values()
    ]
    outs = [p.communicate(timeout=120)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    fresh = _config(tmp_path / "r3")
    for cfg in (*(r[0] for r in runners.values()), fresh):
        code, out = _cli(["ledger", "pull", "--config", str(cfg)])
        assert code == 0, out
        assert "3 duplicate verdict(s) kept aside" in out, out
    third = _ledger(tmp_path / "r3" / ".gamut" / "ledger")
    ledgers = [r[1] for r in runners.values()] + [third]
    keys = [r.key for r in _records(third.scheme, 0, 3)]
    seen = {tuple(_verdict_of(led, k) for k in keys) for led in ledgers}
    assert len(seen) == 1, "the three ledgers count different verdicts"
    (verdicts,) = seen
    first = third.push_records()[0]  # the push that landed first is the one that counts
    (winner,) = [v for _, _, clash, v in runners.values() if clash in first.shards]
    assert verdicts == (winner.code,) * 3
    assert all(led.verdicts().num_rows == 3 + 3 + 2 + 2 for led in ledgers)


def test_a_public_dataset_or_another_ledger_is_refused(ledger_hub: FakeHub, tmp_path: Path) -> None:
    a = _ledger(tmp_path / "a")
    a.append_verdicts(_records(a.scheme, 0, 2))
    push(a, REPO)
    public = _ledger(tmp_path / "p", held=False)
    public.append_verdicts(_records(public.scheme, 0, 2))
    with pytest.raises(GamutError, match="another ledger"):
        push(public, REPO)
    with pytest.raises(GamutError, match="another ledger"):
        pull(public, REPO)
    ledger_hub.repos[REPO].private = False
    with pytest.raises(GamutError, match="not private"):
        push(a, REPO)
    assert _commits(ledger_hub) == 1


def test_a_pushed_compaction_spares_a_fresh_pull_the_small_shards(
    ledger_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gamut.ledger_hub as ledger_hub_module

    a = _ledger(tmp_path / "a")
    small = [a.append_verdicts(_records(a.scheme, 10 * i, 2)) for i in range(6)]
    a.append_verdicts(_records(a.scheme, 0, 1, Verdict.CONTRADICTS))  # a duplicate of key 0
    push(a, REPO)
    b = _ledger(tmp_path / "b")
    pull(b, REPO)  # b holds the small shards
    monkeypatch.setattr(ledger_hub_module, "COMPACT_AT", 3)  # push compacts past 3 small shards
    a.append_verdicts(_records(a.scheme, 100, 2))
    report = push(a, REPO)
    assert report.compacted == 7 and report.commit_url is not None
    _, _, added, deleted = ledger_hub.repos[REPO].log[-1]
    assert deleted == [] and sum(p.startswith("compactions/") for p in added) == 1
    assert all(f"verdicts/{n}" in _head(ledger_hub) for n in small), "remote files stay"
    c = _ledger(tmp_path / "c")
    seen = len(ledger_hub.requests)
    fresh = pull(c, REPO)
    fetched = {r.path for r in ledger_hub.requests[seen:] if "/resolve/" in r.path}
    assert not any(str(n) in p for n in small for p in fetched), "small shards downloaded"
    again = pull(b, REPO)  # b's small shards are replaced by the compaction it pulls
    keys = [r.key for r in _records(a.scheme, 0, 1)] + [r.key for r in _records(a.scheme, 50, 2)]
    for led, got in ((a, report), (b, again), (c, fresh)):
        assert got.duplicates == 1, led.root
        assert [_verdict_of(led, k) for k in keys] == [Verdict.MEETS.code] * 3
        assert led.verify() == []
    assert c.verdicts().num_rows == 6 * 2 + 1 + 2
    assert len(c.shard_names("verdicts")) == 2, "the compacted shard and the last one"
    # the compacted shard damaged on the dataset: refused, and the small shards pulled instead
    from scoring.ledger.order import read_compactions

    ((compacted,),) = [r.shards for r in read_compactions(c.root, c.scheme)]
    broken = bytearray(_head(ledger_hub)[compacted])
    broken[len(broken) // 2] ^= 0xFF
    _head(ledger_hub)[compacted] = bytes(broken)
    d = _ledger(tmp_path / "d")
    damaged = pull(d, REPO)
    assert [p.file for p in damaged.refused] == [f"hf://datasets/{REPO}/{compacted}"]
    assert all(f"verdicts/{n}" in _files(d) for n in small)
    assert [_verdict_of(d, k) for k in keys] == [Verdict.MEETS.code] * 3
    assert damaged.duplicates == 1 and d.verdicts().num_rows == 6 * 2 + 1 + 2


def _config(root: Path, extra: str = f'ledger_hub = "{REPO}"') -> Path:
    return write_config(
        root,
        "rubrics",
        extra=f'\n[store]\nledger_key_env = "GAMUT_LEDGER_KEY"\n{extra}\n',
    )


def _cli(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def test_cli_push_pull_verify_and_a_flipped_byte(ledger_hub: FakeHub, tmp_path: Path) -> None:
    up = _config(tmp_path / "up")
    led = _ledger(tmp_path / "up" / ".gamut" / "ledger")
    led.append_verdicts(_records(led.scheme, 0, 6))
    code, out = _cli(["ledger", "push", "--config", str(up)])
    assert code == 0, out
    assert "pushed 1 new shard(s)" in out
    code, out = _cli(["ledger", "push", "--config", str(up)])
    assert code == 0 and "no commit" in out
    assert _commits(ledger_hub) == 1

    down = _config(tmp_path / "down")
    code, out = _cli(["ledger", "pull", "--config", str(down)])
    assert code == 0 and "pulled 2 new file(s)" in out, out
    code, out = _cli(["ledger", "verify", "--config", str(down)])
    assert code == 0 and "every one sound" in out, out
    shard = next((tmp_path / "down" / ".gamut" / "ledger" / "verdicts").glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[100] ^= 0x01
    shard.write_bytes(bytes(data))
    code, out = _cli(["ledger", "verify", "--config", str(down)])
    assert code == 1
    assert shard.name in out and "corrupted" in out
    assert TOKEN not in out


def test_cli_merge_keeps_a_conflicting_verdict_aside(ledger_hub: FakeHub, tmp_path: Path) -> None:
    cfg = _config(tmp_path / "p")
    here = _ledger(tmp_path / "p" / ".gamut" / "ledger")
    here.append_verdicts(_records(here.scheme, 0, 2, Verdict.MEETS))
    there = _ledger(tmp_path / "there")
    there.append_verdicts(_records(there.scheme, 5, 2))
    code, out = _cli(["ledger", "merge", str(tmp_path / "there"), "--config", str(cfg)])
    assert code == 0 and "merged 1 shard(s)" in out, out
    clash = _ledger(tmp_path / "clash")
    clash.append_verdicts(_records(clash.scheme, 0, 1, Verdict.CONTRADICTS))
    code, out = _cli(["ledger", "merge", str(tmp_path / "clash"), "--config", str(cfg)])
    assert code == 0, out
    assert "food-0000" in out and "meets counts, contradicts kept aside" in out
    assert "1 duplicate verdict(s) kept aside" in out
    code, out = _cli(["ledger", "verify", "--config", str(cfg)])
    assert code == 0 and "1 duplicate verdict(s) kept aside" in out, out


def test_cli_without_a_ledger_dataset_or_a_valid_token(
    ledger_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = _config(tmp_path / "local", extra="")
    code, out = _cli(["ledger", "push", "--config", str(local)])
    assert code == 0 and "no [store] ledger_hub" in out and "nothing to push" in out
    cfg = _config(tmp_path / "p")
    led = _ledger(tmp_path / "p" / ".gamut" / "ledger")
    led.append_verdicts(_records(led.scheme, 0, 2))
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_token_value")
    code, out = _cli(["ledger", "push", "--config", str(cfg)])
    assert code == 1 and "HTTP 401" in out and "HF_TOKEN" in out
    assert "hf_wrong_token_value" not in out
    monkeypatch.delenv("HF_TOKEN")
    code, out = _cli(["ledger", "pull", "--config", str(cfg)])
    assert code == 1 and "no Hub token" in out
    assert _commits(ledger_hub) == 0


def test_the_live_configs_placeholder_ledger_is_named_not_contacted() -> None:
    from click.testing import CliRunner

    from gamut.cli import main

    root = Path(__file__).resolve().parents[2]
    for verb in ("pull", "push"):
        result = CliRunner().invoke(main, ["ledger", verb, "--config", str(root / "gamut.toml")])
        assert result.exit_code == 1, result.output
        assert "UNPUBLISHED/gamut-ledger" in result.output and "placeholder" in result.output


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_pull_removes_what_a_killed_pull_left_and_spares_a_running_ones(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    a = _ledger(tmp_path / "a")
    a.append_verdicts(_records(a.scheme, 0, 2))
    push(a, REPO)
    b = _ledger(tmp_path / "b")
    killed = b.root / f".pull-{_dead_pid()}.abcd_123"  # SIGKILL skips every finally
    (killed / "verdicts").mkdir(parents=True)
    (killed / "verdicts" / "x.parquet").write_bytes(b"half")
    running = b.root / f".pull-{os.getpid()}.live_456"  # a pull of a process still running
    running.mkdir()
    report = pull(b, REPO)
    assert report.ingested and not killed.exists() and running.is_dir()
    assert b.verify() == []
    left = sorted(p.name for p in b.root.iterdir() if p.name.startswith(".pull-"))
    assert left == [running.name]  # the pull's own staging folder is gone too
