"""The order in which shards count: pushed shards in the remote dataset's commit order, then the
local shards not pushed yet.

Every push adds one *push record* with its shards: ``pushes/<name>.json``, naming the record
that was the remote's last when the push read it (``after``) and the shards that push brought
(and, first, any shard the remote held that no record named yet). A push commits against the
head it read (the Hub refuses it when another push landed first, and it reads again), so the
records form one chain in commit order. A record is named like a shard (the SHA-256 of its bytes,
or their HMAC under the ledger secret in a held ledger), travels with the shards through push,
pull and merge, and is never rewritten.

Every machine holding the same records ranks the same shards the same way: records by their depth
in the chain (ties, which only a forged record could make, by name), a record's shards in its
order; a shard no record names ranks after every pushed one. :class:`~scoring.ledger.Ledger`
reads shards in that rank (then by their first row's time, then name), and the first verdict of
a key counts: a later, different one is a *duplicate*, kept in its shard and never scored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from scoring.ledger.checks import name_problem, shard_name
from scoring.ledger.keys import KeyScheme

#: The folder of push records, and a record's file name.
PUSHES = "pushes"
RECORD = re.compile(r"^[0-9a-f]{64}\.json$")
_SHARD_PATH = re.compile(r"^(verdicts|failures|batches)/[0-9a-f]{64}\.parquet$")
#: Largest push record read (a push of 20,000 shards takes 1.5 MB).
MAX_RECORD_BYTES = 4 << 20
_FORMAT = 1


@dataclass(frozen=True)
class PushRecord:
    """One push: its record's name, the record before it (None: the first), its shard paths."""

    name: str
    after: str | None
    shards: tuple[str, ...]


def record_bytes(after: str | None, shards: list[str]) -> bytes:
    """The content of a push record (canonical JSON)."""
    return json.dumps(
        {"format": _FORMAT, "after": after, "shards": shards}, separators=(",", ":")
    ).encode()


def record_name(data: bytes, scheme: KeyScheme) -> str:
    """The file name of a push record: named as a shard is (:func:`shard_name`)."""
    return shard_name(data, scheme).removesuffix(".parquet") + ".json"


def record_problem(path: Path, scheme: KeyScheme) -> str | None:
    """Why ``path`` is not a sound push record of a ledger under ``scheme`` (None when it is)."""
    if not RECORD.match(path.name):
        return "not a push record's name"
    size = path.stat().st_size
    if size > MAX_RECORD_BYTES:
        return f"{size} bytes, more than a push record's {MAX_RECORD_BYTES}"
    bad = name_problem(path, scheme)
    if bad:
        return bad
    return None if _parse(path.name, path.read_bytes()) else "not a push record (its JSON)"


def _parse(name: str, data: bytes) -> PushRecord | None:
    try:
        got = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(got, dict) or got.get("format") != _FORMAT:
        return None
    after, shards = got.get("after"), got.get("shards")
    if not (after is None or (isinstance(after, str) and RECORD.match(after))):
        return None
    if not isinstance(shards, list) or not all(
        isinstance(s, str) and _SHARD_PATH.match(s) for s in shards
    ):
        return None
    return PushRecord(name, after, tuple(shards))


def read_records(root: Path, scheme: KeyScheme) -> list[PushRecord]:
    """The sound push records under ``root`` (a ledger folder), in chain order: a record whose
    name is not its bytes' (held: their MAC) or that does not parse orders nothing
    (``Ledger.verify`` names it)."""
    folder = root / PUSHES
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.iterdir()):
        if RECORD.match(p.name) and p.stat().st_size <= MAX_RECORD_BYTES:
            data = p.read_bytes()
            rec = _parse(p.name, data) if record_name(data, scheme) == p.name else None
            if rec is not None:
                out.append(rec)
    return chain(out)


def chain(records: list[PushRecord]) -> list[PushRecord]:
    """``records`` in commit order: by depth in the chain of ``after`` (a record whose ``after``
    is absent starts a chain), ties by name."""
    by_name = {r.name: r for r in records}
    depth: dict[str, int] = {}
    for r in records:
        path = []
        cur: PushRecord | None = r
        while cur is not None and cur.name not in depth and cur.name not in path:
            path.append(cur.name)
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


__all__ = [
    "MAX_RECORD_BYTES",
    "PUSHES",
    "RECORD",
    "PushRecord",
    "chain",
    "ranks",
    "read_records",
    "record_bytes",
    "record_name",
    "record_problem",
]
