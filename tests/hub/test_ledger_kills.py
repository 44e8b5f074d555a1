"""SIGKILL in the middle of ``gamut ledger push``, ``pull`` and ``merge``, then the same command
again; and pushes at once to one dataset.

Each command is a real ``gamut`` process, killed when the fake hub sees a chosen request (the
hub answers it to nobody) or when the ledger it copies into holds some, not all, of the shards.
After the command runs again: no verdict is lost or stored twice, the dataset received each
shard once, every ledger verifies and counts the same verdicts, and nothing a killed process
left (a pull's staging folder) stays behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from gamut.ledger_hub import push
from scoring.ledger import Ledger
from tests.hub.conftest import LEDGER_REPO as REPO
from tests.hub.conftest import LEDGER_SECRET as SECRET
from tests.hub.fake_hub import FakeHub, Request
from tests.hub.test_ledger_sync import _config, _ledger, _records

ROOT = Path(__file__).resolve().parents[2]
#: Shards of the ledgers whose copying is killed half-way (about 12 ms each, durably written).
MANY = 100


def _gamut(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gamut", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _run(*args: str) -> str:
    proc = _gamut(*args)
    out = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 0, out
    return out


def _killed(proc: subprocess.Popen[bytes]) -> str:
    """The output of ``proc``, which must have died of SIGKILL."""
    out = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == -signal.SIGKILL, out
    return out


def _kill_at(hub: FakeHub, match: Callable[[Request], bool], nth: int = 1) -> list[int]:
    """Have the hub SIGKILL the process whose id is put in the returned list at the ``nth``
    request that ``match`` holds for, before answering it."""
    pid: list[int] = []
    seen = 0

    def hook(req: Request) -> None:
        nonlocal seen
        if pid and match(req):
            seen += 1
            if seen == nth:
                os.kill(pid[0], signal.SIGKILL)
                time.sleep(0.2)  # the process is gone before the request is answered

    hub.on_request = hook
    return pid


def _shard_get(req: Request) -> bool:
    return req.method == "GET" and "/resolve/" in req.path and req.path.endswith(".parquet")


def _filled(led: Ledger, n: int, start: int = 0) -> Ledger:
    """``led`` with ``n`` more verdicts, one shard each."""
    for i in range(start, start + n):
        led.append_verdicts(_records(led.scheme, i, 1))
    return led


def _state(led: Ledger) -> dict[bytes, int]:
    """Every key of ``led`` and the verdict that counts for it; no key stored twice."""
    t = led.verdicts(["key", "verdict"])
    keys = t["key"].to_pylist()
    assert len(keys) == len(set(keys)), "a verdict stored twice"
    return dict(zip(keys, t["verdict"].to_pylist(), strict=True))


def _clean(led: Ledger) -> None:
    """``led`` verifies and holds nothing a killed process left."""
    assert led.verify() == []
    assert not [p.name for p in led.root.iterdir() if p.name.startswith(".pull-")]


def _sent_once(hub: FakeHub) -> Counter[str]:
    """Every path the dataset received, each received once."""
    added = Counter(p for _, _, paths, _ in hub.repos[REPO].log for p in paths)
    assert max(added.values(), default=1) == 1, added
    return added


# -- push -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "point",
    ["pulling the remote's shards", "before its commit", "after its commit landed"],
)
def test_a_push_killed_then_pushed_again_sends_each_shard_once(
    ledger_hub: FakeHub, tmp_path: Path, point: str
) -> None:
    other = _filled(_ledger(tmp_path / "other"), 5, 100)
    push(other, REPO)  # the dataset holds other shards: the push pulls them first
    cfg = _config(tmp_path / "mine")
    mine = _filled(_ledger(tmp_path / "mine" / ".gamut" / "ledger"), 5)
    if point == "pulling the remote's shards":
        pid = _kill_at(ledger_hub, _shard_get, nth=3)
    elif point == "before its commit":
        pid = _kill_at(ledger_hub, lambda r: "/preupload/" in r.path)
    else:

        def land_then_kill(repo_id: str, repo: object) -> None:
            os.kill(pid[0], signal.SIGKILL)  # the commit lands; its answer reaches nobody
            time.sleep(0.2)

        pid = []
        ledger_hub.before_commit = land_then_kill
    proc = _gamut("ledger", "push", "--config", str(cfg))
    pid.append(proc.pid)
    _killed(proc)
    landed = point == "after its commit landed"
    _wait(lambda: len(ledger_hub.repos[REPO].log) == 1 + landed)  # the hub's thread lands it
    ledger_hub.on_request = ledger_hub.before_commit = None
    _run("ledger", "push", "--config", str(cfg))
    added = _sent_once(ledger_hub)
    assert len(ledger_hub.repos[REPO].log) == 2  # the killed push's commit, or the rerun's
    assert sum(p.startswith("verdicts/") for p in added) == 10
    _clean(mine)
    _run("ledger", "pull", "--config", str(_config(tmp_path / "fresh")))
    fresh = _ledger(tmp_path / "fresh" / ".gamut" / "ledger")
    assert _state(mine) == _state(fresh) and len(_state(mine)) == 10
    assert [r.name for r in mine.push_records()] == [r.name for r in fresh.push_records()]


# -- pull -------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["first download", "half the downloads", "copying"])
def test_a_pull_killed_then_pulled_again_ingests_every_shard_once(
    ledger_hub: FakeHub, tmp_path: Path, point: str
) -> None:
    remote = _filled(_ledger(tmp_path / "remote"), MANY)
    push(remote, REPO)
    cfg = _config(tmp_path / "mine")
    mine = _ledger(tmp_path / "mine" / ".gamut" / "ledger")
    own = _state(_filled(mine, 3, 1000))  # its own verdicts, never pushed: kept
    pid: list[int] = []
    if point != "copying":
        pid = _kill_at(ledger_hub, _shard_get, nth=1 if point == "first download" else MANY // 2)
    proc = _gamut("ledger", "pull", "--config", str(cfg))
    pid.append(proc.pid)
    if point == "copying":
        _kill_when(proc, lambda: len(mine.shard_names("verdicts")) > 3)
    _killed(proc)
    ledger_hub.on_request = None
    got = len(mine.shard_names("verdicts"))
    assert 3 <= got < 3 + MANY  # killed before the end
    _run("ledger", "pull", "--config", str(cfg))
    _clean(mine)
    assert _state(mine) == {**_state(remote), **own}


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """SIGKILL ``proc`` as soon as ``ready()`` holds, which it must before ``proc`` ends."""
    _wait(ready, lambda: proc.poll() is None)
    proc.send_signal(signal.SIGKILL)


def _wait(ready: Callable[[], bool], alive: Callable[[], bool] = lambda: True) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert alive(), "the command ended before the point it was to be killed at"
        assert time.monotonic() < deadline, "never reached"
        time.sleep(0.005)


# -- merge ------------------------------------------------------------------------------------


def test_a_merge_killed_while_copying_then_merged_again_copies_every_shard_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAMUT_LEDGER_KEY", SECRET)
    other = _filled(_ledger(tmp_path / "other"), MANY)
    other.add_push_record(None, [f"verdicts/{n}" for n in other.shards_oldest_first("verdicts")])
    cfg = _config(tmp_path / "mine", extra="")
    mine = _filled(_ledger(tmp_path / "mine" / ".gamut" / "ledger"), 3, 1000)
    want = sorted({*other.shard_names("verdicts"), *mine.shard_names("verdicts")})
    proc = _gamut("ledger", "merge", str(other.root), "--config", str(cfg))
    _kill_when(proc, lambda: len(mine.shard_names("verdicts")) > 3)
    _killed(proc)
    assert len(mine.shard_names("verdicts")) < 3 + MANY  # killed before the end
    _run("ledger", "merge", str(other.root), "--config", str(cfg))
    _clean(mine)
    assert mine.shard_names("verdicts") == want
    assert len(_state(mine)) == MANY + 3
    assert mine.record_names() == other.record_names()


# -- pushes at once ---------------------------------------------------------------------------


def test_pushes_at_once_of_the_same_shards_and_of_overlapping_ones_send_each_shard_once(
    ledger_hub: FakeHub, tmp_path: Path
) -> None:
    shared = _records(_ledger(tmp_path / "seed").scheme, 0, 2)
    cfgs, ledgers = [], []
    for n, own in enumerate((0, 0, 3)):  # two ledgers alike, a third with shards of its own
        cfgs.append(_config(tmp_path / f"r{n}"))
        led = _ledger(tmp_path / f"r{n}" / ".gamut" / "ledger")
        led.append_verdicts(shared)  # the same rows: the same shard, by name
        _filled(led, own, 100 * (n + 1))
        ledgers.append(led)
    procs = [_gamut("ledger", "push", "--config", str(c)) for c in cfgs]
    outs = [p.communicate(timeout=300)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    added = _sent_once(ledger_hub)
    assert sum(p.startswith("verdicts/") for p in added) == 1 + 3
    for cfg in cfgs:
        _run("ledger", "pull", "--config", str(cfg))
    states = [_state(led) for led in ledgers]
    assert all(s == states[0] for s in states) and len(states[0]) == 2 + 3
    orders = [[r.name for r in led.push_records()] for led in ledgers]
    assert all(o == orders[0] for o in orders)
    for led in ledgers:
        _clean(led)
