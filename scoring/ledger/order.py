"""The order in which shards count: pushed shards in the remote's commit order, then local ones.

Each push writes a *push record* (``pushes/<name>.json``, named like a shard, never rewritten)
naming the record it followed (``after``) and the shards it brought. A push commits against the
head it read, so the records form one chain; every machine ranks shards the same way: records by
depth in the chain (ties, only a forged record makes, by name), a record's shards in its order,
unnamed shards last. A *compaction record* (``compactions/<name>.json``) counts only when its run
of pushed shards is contiguous and all its shards are present; its shards then take the run's
place and the run is not read (nor pulled).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from scoring.ledger.checks import name_problem, shard_name
from scoring.ledger.keys import KeyScheme
from scoring.ledger.records import KINDS
from scoring.storage import open_regular

#: The folders of push records and of compaction records, and a record's file name.
PUSHES = "pushes"
COMPACTIONS = "compactions"
RECORD = re.compile(r"^[0-9a-f]{64}\.json$")
_SHARD_PATH = re.compile(r"^(verdicts|failures|batches)/[0-9a-f]{64}\.parquet$")
#: Largest push record read (a push of 20,000 shards takes 1.5 MB).
MAX_RECORD_BYTES = 4 << 20
_FORMAT = 1
T = TypeVar("T")


@dataclass(frozen=True)
class PushRecord:
    """One push: its record's name, the record before it (None: the first), its shard paths."""

    name: str
    after: str | None
    shards: tuple[str, ...]


@dataclass(frozen=True)
class Compaction:
    """One compaction: its record's name, its kind, its shards, and the run they replace."""

    name: str
    kind: str
    shards: tuple[str, ...]
    replaces: tuple[str, ...]


def compaction_bytes(kind: str, shards: list[str], replaces: list[str]) -> bytes:
    """The content of a compaction record (canonical JSON)."""
    return json.dumps(
        {"format": _FORMAT, "kind": kind, "shards": shards, "replaces": replaces},
        separators=(",", ":"),
    ).encode()


def record_bytes(after: str | None, shards: list[str]) -> bytes:
    """The content of a push record (canonical JSON)."""
    return json.dumps(
        {"format": _FORMAT, "after": after, "shards": shards}, separators=(",", ":")
    ).encode()


def record_name(data: bytes, scheme: KeyScheme) -> str:
    """The file name of a push record: named as a shard is (:func:`shard_name`)."""
    return shard_name(data, scheme).removesuffix(".parquet") + ".json"


def record_problem(path: Path, scheme: KeyScheme) -> str | None:
    """Why ``path`` is not a sound push record of a ledger under ``scheme`` (None when it is).

    Raises:
        OSError: it cannot be read, or its name holds no regular file
            (:class:`~scoring.errors.NotRegularFileError`).
    """
    if not RECORD.match(path.name):
        return "not a push record's name"
    data = _record_data(path)
    if len(data) > MAX_RECORD_BYTES:
        return f"more than a push record's {MAX_RECORD_BYTES} bytes"
    bad = name_problem(io.BytesIO(data), path.name, scheme)
    if bad:
        return bad
    parse = _parse_compaction if path.parent.name == COMPACTIONS else _parse
    return None if parse(path.name, data) else "not a record (its JSON)"


def _record_data(path: Path) -> bytes:
    """A record file's bytes, one more than a record may hold at most."""
    with open_regular(path) as f:
        return f.read(MAX_RECORD_BYTES + 1)


def _paths(value: object, kind: str | None = None) -> bool:
    return isinstance(value, list) and all(
        isinstance(s, str) and _SHARD_PATH.match(s) and (kind is None or s.startswith(kind + "/"))
        for s in value
    )


def _json(data: bytes) -> dict[str, object] | None:
    try:
        got = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return got if isinstance(got, dict) and got.get("format") == _FORMAT else None


def _parse_compaction(name: str, data: bytes) -> Compaction | None:
    got = _json(data)
    if got is None or got.get("kind") not in KINDS:
        return None
    kind, shards, replaces = str(got["kind"]), got.get("shards"), got.get("replaces")
    if not (_paths(shards, kind) and _paths(replaces, kind)) or not shards or not replaces:
        return None
    assert isinstance(shards, list) and isinstance(replaces, list)
    if set(shards) & set(replaces):
        return None
    return Compaction(name, kind, tuple(shards), tuple(replaces))


def _parse(name: str, data: bytes) -> PushRecord | None:
    got = _json(data)
    if got is None:
        return None
    after, shards = got.get("after"), got.get("shards")
    if not (after is None or (isinstance(after, str) and RECORD.match(after))):
        return None
    if not _paths(shards):
        return None
    assert isinstance(shards, list)
    return PushRecord(name, after, tuple(shards))


def read_records(root: Path, scheme: KeyScheme) -> list[PushRecord]:
    """The sound push records under ``root`` in chain order (an unsound one orders nothing)."""
    return chain(_read(root / PUSHES, scheme, _parse))


def read_compactions(root: Path, scheme: KeyScheme) -> list[Compaction]:
    """The sound compaction records under ``root``, by name."""
    return _read(root / COMPACTIONS, scheme, _parse_compaction)


def _read(folder: Path, scheme: KeyScheme, parse: Callable[[str, bytes], T | None]) -> list[T]:
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.iterdir()):
        if not RECORD.match(p.name):
            continue
        try:
            data = _record_data(p)
        except OSError:
            continue  # orders nothing: `Ledger.verify` names it
        if len(data) <= MAX_RECORD_BYTES and record_name(data, scheme) == p.name:
            rec = parse(p.name, data)
            if rec is not None:
                out.append(rec)
    return out


def chain(records: list[PushRecord]) -> list[PushRecord]:
    """``records`` in commit order: by depth in the chain of ``after`` (a record whose ``after``
    is absent starts a chain), ties by name."""
    by_name = {r.name: r for r in records}
    depth: dict[str, int] = {}
    for r in records:
        path: list[str] = []
        walked: set[str] = set()  # a cycle (only a forger's) ends the walk
        cur: PushRecord | None = r
        while cur is not None and cur.name not in depth and cur.name not in walked:
            path.append(cur.name)
            walked.add(cur.name)
            cur = by_name.get(cur.after) if cur.after else None
        base = depth[cur.name] + 1 if cur is not None and cur.name in depth else 0
        for i, name in enumerate(reversed(path)):
            depth[name] = base + i
    return sorted(records, key=lambda r: (depth[r.name], r.name))


def ranks(records: list[PushRecord]) -> dict[str, int]:
    """Each pushed shard path's rank (records in chain order, a record's shards in order)."""
    out: dict[str, int] = {}
    for r in records:
        for s in r.shards:
            out.setdefault(s, len(out))
    return out


def pushed_order(rank: dict[str, int], kind: str) -> list[str]:
    """The pushed shard paths of ``kind``, in rank order."""
    return sorted((p for p in rank if p.startswith(kind + "/")), key=rank.__getitem__)


def honoured(
    compactions: list[Compaction], rank: dict[str, int], present: set[str]
) -> list[Compaction]:
    """The compactions that count: every shard present, and the run they replace contiguous,
    in order, in the pushed order of their kind."""
    where: dict[str, dict[str, int]] = {}
    out = []
    for c in compactions:
        if c.kind not in where:
            where[c.kind] = {p: i for i, p in enumerate(pushed_order(rank, c.kind))}
        at = [where[c.kind].get(p, -1) for p in c.replaces]
        if at[0] >= 0 and at == list(range(at[0], at[0] + len(at))) and set(c.shards) <= present:
            out.append(c)
    return out


def sort_keys(
    rank: dict[str, int], compactions: list[Compaction]
) -> tuple[dict[str, tuple[int, int, str, int]], set[str]]:
    """Where each pushed or compacted shard path counts (unpushed paths count after all), and the
    paths the ``compactions`` replace (never read)."""
    keys = {p: (r, 1, "", 0) for p, r in rank.items()}
    replaced: set[str] = set()
    for c in compactions:
        start = rank[c.replaces[0]]
        for j, s in enumerate(c.shards):  # before the run's first shard, in the record's order
            keys[s] = (start, 0, c.name, j)
        replaced.update(c.replaces)
    return keys, replaced
