"""Verdict keys: what a verdict is stored under, computed once per run and in bulk.

A key is 32 bytes: a 16-byte *unit digest* (judge identity, question text, response text, plus the
ids for judges keyed by ids) followed by a 16-byte *check digest* (check kind and text, plus the
check id for judges keyed by ids, plus the question id when rubrics are held). Each half is a
truncated SHA-256 when rubrics are public and a truncated HMAC-SHA256 under a key derived from the
ledger secret when they are held, so a copy of a held ledger without the secret cannot confirm a
guess of a check's text (nor of a response's), nor tell that two questions share a check text
(:meth:`KeyScheme.check_parts`). The shard MAC key (:attr:`KeyScheme.mac_key`) is derived from the
same secret under another label, so no key digest is ever a valid shard MAC.

Splitting the key this way makes keys cheap at scale: one digest per (judge, response) and one per
check, and every pair's key is the concatenation of two rows of two arrays (numpy, no per-pair
hashing). A batch request's ``custom_id`` is the key in hex (:func:`custom_id`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard

import numpy as np
import numpy.typing as npt

from scoring.errors import GamutError

#: Bytes in a key; each half (unit digest, check digest) is ``KEY_BYTES // 2``.
KEY_BYTES = 32
HALF = KEY_BYTES // 2
#: The smallest ledger secret accepted, in bytes.
MIN_SECRET_BYTES = 32
#: The keyed scheme's version: 2 puts the question id in the check digest and derives the key
#: and MAC keys from the secret (version 1 keyed with the secret itself and no question id).
KEYED_VERSION = 2
#: The prefix of a keyed scheme's id, and version 1's (refused by name).
KEYED_PREFIX = f"hmac-sha256-v{KEYED_VERSION}:"
KEYED_V1_PREFIX = "hmac-sha256:"
#: ``custom_id`` of a batch request: the key as 64 lowercase hex digits (fits Anthropic's
#: ``^[a-zA-Z0-9_-]{1,64}$`` and OpenAI's limits).
_CUSTOM_ID = re.compile(r"^[0-9a-f]{64}$")

#: Queries compared at a time by :meth:`KeyIndex.find`.
_FIND_CHUNK = 1 << 18

#: SHA-256's block: HMAC pads its key to it.
_BLOCK = 64

Keys = npt.NDArray[np.uint8]
"""An ``(n, KEY_BYTES)`` uint8 array of keys."""


def custom_id(key: bytes) -> str:
    """The batch request id of the verdict stored under ``key``: its 64 hex digits."""
    if len(key) != KEY_BYTES:
        raise ValueError(f"a verdict key has {KEY_BYTES} bytes, not {len(key)}")
    return key.hex()


def key_from_custom_id(value: str) -> bytes:
    """The key a batch request id names (the inverse of :func:`custom_id`).

    Raises:
        ValueError: ``value`` is not 64 lowercase hex digits.
    """
    if not isinstance(value, str) or not _CUSTOM_ID.match(value):
        raise ValueError("a custom_id is 64 lowercase hex digits (the verdict key)")
    return bytes.fromhex(value)


#: A part's length as :func:`_frame` writes it: 8 bytes, little-endian.
_LENGTH = struct.Struct("<Q").pack


def _frame(parts: Iterable[str]) -> bytes:
    """The parts as bytes, each after its length (8 bytes), so that no two lists of parts give
    the same bytes."""
    out: list[bytes] = []
    for p in parts:  # once per response and per check at paper scale: no per-part concatenation
        b = p.encode("utf-8", "surrogatepass")
        out += (_LENGTH(len(b)), b)
    return b"".join(out)


@dataclass(frozen=True)
class KeyScheme:
    """How keys are hashed: plain SHA-256 (``secret`` None) or HMAC-SHA256 under ``secret``.

    Use :meth:`public` or :meth:`keyed`.
    """

    secret: bytes | None = None
    _keys_key: bytes = field(default=b"", init=False, repr=False, compare=False)
    _mac_key: bytes = field(default=b"", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.secret is not None:  # the two keys, each under its own label
            object.__setattr__(self, "_keys_key", _derive(self.secret, b"verdict keys"))
            object.__setattr__(self, "_mac_key", _derive(self.secret, b"shard mac"))

    @classmethod
    def public(cls) -> KeyScheme:
        """Plain SHA-256 keys (rubrics are public)."""
        return cls(None)

    @classmethod
    def keyed(cls, secret: str | bytes) -> KeyScheme:
        """HMAC-SHA256 keys under ``secret`` (rubrics are held).

        Raises:
            GamutError: the secret is shorter than :data:`MIN_SECRET_BYTES`.
        """
        raw = secret.encode() if isinstance(secret, str) else secret
        if len(raw) < MIN_SECRET_BYTES:
            raise GamutError(
                f"the ledger secret has {len(raw)} bytes; use at least {MIN_SECRET_BYTES} "
                "(for example: python -c 'import secrets; print(secrets.token_hex(32))')"
            )
        return cls(raw)

    @property
    def held(self) -> bool:
        """Whether keys are keyed hashes."""
        return self.secret is not None

    @property
    def scheme_id(self) -> str:
        """``sha256``, or :data:`KEYED_PREFIX` and a fingerprint of the secret (which reveals
        nothing about it): shards written under another scheme are foreign to a ledger."""
        if self.secret is None:
            return "sha256"
        tag = hmac.new(self.secret, b"gamut ledger key fingerprint", hashlib.sha256).hexdigest()
        return f"{KEYED_PREFIX}{tag[:16]}"

    @property
    def mac_key(self) -> bytes | None:
        """The key of the shards' MACs (None for a public scheme): derived from the secret
        under its own label, apart from the key of the verdict keys' digests."""
        if self.secret is None:
            return None
        return self._mac_key

    def check_parts(
        self, kind: str, text: str, question_id: str, check_id: str | None = None
    ) -> tuple[str, ...]:
        """The parts of a check digest: kind and text (and the check id for judges keyed by ids);
        for a keyed scheme, the question id first, so that equal check texts of two questions
        have unrelated digests (a public scheme keeps its keys: its check texts are public)."""
        tail = (kind, text) if check_id is None else (kind, text, check_id)
        return (question_id, *tail) if self.secret is not None else tail

    def _keyed(self) -> Any:
        return hmac.new(self._keys_key, b"", hashlib.sha256)

    def digest(self, *parts: str) -> bytes:
        """A 16-byte digest of the parts, unambiguously framed."""
        msg = _frame(parts)
        if self.secret is None:
            return hashlib.sha256(msg).digest()[:HALF]
        h = self._keyed()
        h.update(msg)
        return bytes(h.digest()[:HALF])

    def digests_of_hex(
        self, halves: npt.NDArray[np.uint8], lead: Sequence[str] = ()
    ) -> npt.NDArray[np.uint8]:
        """:meth:`digests` of ``(d.hex(),)`` for each row ``d`` of the ``(n, 16)`` array
        ``halves`` (a judge's unit digests from the shared response digests): every row's
        message is the shared parts, one length and 32 hex digits, so the length is hashed once
        with the shared parts and each row costs one slice of one hex string."""
        if halves.ndim != 2 or halves.shape[1] != HALF:
            raise ValueError(f"digests_of_hex takes an (n, {HALF}) array, not {halves.shape}")
        width = 2 * HALF
        digits = np.ascontiguousarray(halves).tobytes().hex().encode("ascii")
        rows = (digits[i : i + width] for i in range(0, len(digits), width))
        return self._digests_framed(rows, _frame(lead) + width.to_bytes(8, "little"))

    def digests(
        self, rows: Iterable[Sequence[str]], lead: Sequence[str] = ()
    ) -> npt.NDArray[np.uint8]:
        """An ``(n, 16)`` array: :meth:`digest` of ``(*lead, *row)`` for each row of parts (the
        same values, with the keyed hash's set-up and the ``lead`` parts every row shares hashed
        once).

        The keyed hash is HMAC-SHA256 spelled out (RFC 2104: the SHA-256 of the key's outer pad
        and of the SHA-256 of its inner pad and the message), so that each row costs two copies
        of hashlib states and no Python-level HMAC object: half the time at paper scale.
        """
        return self._digests_framed((_frame(r) for r in rows), _frame(lead))

    def _digests_framed(self, messages: Iterable[bytes], shared: bytes) -> npt.NDArray[np.uint8]:
        """The digests of ``shared + m`` for each message ``m``, the shared bytes hashed once."""
        inner: Any = hashlib.sha256()
        outer: Any = None
        if self.secret is not None:
            key = self._keys_key.ljust(_BLOCK, b"\0")  # 32 bytes (derived): never hashed first
            inner.update(bytes(b ^ 0x36 for b in key))
            outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
        inner.update(shared)
        start = inner.copy  # the state after the shared parts (and the key's inner pad)
        out = []
        if outer is None:
            for m in messages:
                h = start()
                h.update(m)
                out.append(h.digest()[:HALF])
        else:
            finish = outer.copy
            for m in messages:
                h = start()
                h.update(m)
                o = finish()
                o.update(h.digest())
                out.append(o.digest()[:HALF])
        return np.frombuffer(b"".join(out), dtype=np.uint8).reshape(-1, HALF).copy()


def _derive(secret: bytes, label: bytes) -> bytes:
    """A key for one use of the ledger secret: HMAC-SHA256 of a label naming the use."""
    return hmac.new(secret, b"gamut ledger v2 " + label, hashlib.sha256).digest()


def join_keys(
    units: npt.NDArray[np.uint8],
    checks: npt.NDArray[np.uint8],
    unit_idx: npt.NDArray[np.integer],
    check_idx: npt.NDArray[np.integer],
) -> Keys:
    """Pair keys: row ``i`` is ``units[unit_idx[i]] + checks[check_idx[i]]`` (no hashing)."""
    out = np.empty((len(unit_idx), 4), dtype=np.uint64)
    out[:, :2] = np.take(np.ascontiguousarray(units).view(np.uint64), unit_idx, axis=0)
    out[:, 2:] = np.take(np.ascontiguousarray(checks).view(np.uint64), check_idx, axis=0)
    return out.view(np.uint8)


def key_bytes(keys: Keys) -> list[bytes]:
    """Each row of a key array as ``bytes``."""
    flat = np.ascontiguousarray(keys).tobytes()
    return [flat[i : i + KEY_BYTES] for i in range(0, len(flat), KEY_BYTES)]


def keys_array(keys: Sequence[bytes]) -> Keys:
    """Keys given as ``bytes`` as an ``(n, KEY_BYTES)`` array."""
    if any(len(k) != KEY_BYTES for k in keys):
        raise ValueError(f"every verdict key has {KEY_BYTES} bytes")
    return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, KEY_BYTES).copy()


#: A key array seen as its four 64-bit words, ``(n, 4)``.
Words = npt.NDArray[np.uint64]


def _words(keys: Keys) -> Words:
    """The ``(n, 4)`` 64-bit words of an ``(n, KEY_BYTES)`` key array (a view when contiguous)."""
    return np.ascontiguousarray(keys, dtype=np.uint8).view(np.uint64).reshape(-1, KEY_BYTES // 8)


#: The multipliers of :func:`mix32`: odd, drawn afresh by each process, so that nobody can
#: choose keys that share a mix (a run of equal mixes is walked key by key: chosen keys would make
#: a lookup quadratic). Mixes are never stored.
_MIX = np.array([secrets.randbits(64) | 1 for _ in range(KEY_BYTES // 8)], dtype=np.uint64)


def mix32(keys: Keys | Words) -> npt.NDArray[np.uint32]:
    """A 32-bit mix of each key (both halves), for sorting and searching: the high half of the
    sum of the key's four words times this process's multipliers (:data:`_MIX`), a universal
    hash, so that two different keys share a mix with chance about 2**-32 whatever the keys."""
    w = np.ascontiguousarray(keys).view(np.uint64)  # (n, 4)
    h = w[:, 0] * _MIX[0]
    term = np.empty_like(h)
    for i in range(1, w.shape[1]):
        np.multiply(w[:, i], _MIX[i], out=term)
        h += term
    del term
    h >>= np.uint64(32)
    mix: npt.NDArray[np.uint32] = h.astype(np.uint32)
    return mix


def _by_mix(
    mix: npt.NDArray[np.uint32], row_type: type[np.signedinteger] = np.int64
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.signedinteger]]:
    """``mix`` sorted, and the stable order that sorts it (as ``row_type``): equal mixes keep
    their row order. Each mix is sorted with its row number in its low 32 bits, as one 64-bit
    value: the values are distinct, so an unstable sort (NumPy's vectorised one, several times
    faster than its stable radix sort at paper scale) gives the stable order."""
    n = len(mix)
    if n > 1 << 32:  # row numbers that do not fit 32 bits (never at any scale seen)
        order = np.argsort(mix, kind="stable")
        return mix[order], order.astype(row_type)
    both = mix.astype(np.uint64)
    both <<= np.uint64(32)
    both |= np.arange(n, dtype=np.uint64)
    both.sort()
    rows = (both & np.uint64(0xFFFFFFFF)).astype(row_type)
    both >>= np.uint64(32)
    return both.astype(np.uint32), rows


def _same_at(
    a: Words, ia: npt.NDArray[np.integer], b: Words, ib: npt.NDArray[np.integer]
) -> npt.NDArray[np.bool_]:
    """Whether key ``a[ia[i]]`` is key ``b[ib[i]]``, for each ``i``: the rows gathered whole
    (one ``take`` of four 64-bit words per row, NumPy's fast path, where indexing ``V32`` rows
    copies each one generically), then compared a word at a time."""
    ra, rb = np.take(a, ia, axis=0), np.take(b, ib, axis=0)  # whole rows: one pass each
    out: npt.NDArray[np.bool_] = ra[:, 0] == rb[:, 0]
    for w in range(1, a.shape[1]):
        out &= ra[:, w] == rb[:, w]
    return out


class KeySource(Protocol):
    """Keys computed a slice at a time, never held whole (a judge's pairs:
    :class:`scoring.judge.pairs.PairPlan`, whose keys are joined from one digest per response
    and one per check). Fixed for the source's life: a :class:`KeyIndex` remembers its
    answers to one."""

    def __len__(self) -> int: ...

    def key_slice(self, start: int, stop: int) -> Keys:
        """The keys of rows ``start`` to ``stop`` (``(stop - start, KEY_BYTES)``)."""
        ...


#: What a :class:`KeyIndex` is asked: a key array, or a :class:`KeySource`.
Queries = Keys | KeySource


def _writeable(queries: Queries) -> TypeGuard[Keys]:
    """Whether ``queries`` is a writeable key array, whose answer is never remembered (it may
    change); a source or a read-only array is fixed."""
    return isinstance(queries, np.ndarray) and bool(queries.flags.writeable)


class KeyIndex:
    """A sorted index over a key array, for bulk membership and lookup.

    The index holds the keys' 32-bit mixes in sorted order (and the row of each), and a lookup
    sorts its queries the same way, so that the binary search walks memory in order: at paper
    scale (1.8 M queries into 5.3 M keys) that is about 10 times faster than searching in the
    queries' own order, whose every probe is a cache miss. Both sort each mix with its row number
    as one 64-bit value (:func:`_by_mix`). Rows sharing a mix are next to each other, and whole
    keys are compared.

    Args:
        keys: ``(n, KEY_BYTES)`` keys (duplicates allowed; the first row of a key wins). The
            index keeps the array (a read-only one as it is, a writeable one copied).
    """

    def __init__(self, keys: Keys) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.uint8).reshape(-1, KEY_BYTES)
        if keys.flags.writeable:
            keys = keys.copy()
            keys.flags.writeable = False
        # every row number of an index of fewer than 2**31 keys fits 32 bits: half the memory
        self._row_type: type[np.signedinteger] = (
            np.int32 if len(keys) < np.iinfo(np.int32).max else np.int64
        )
        # equal mixes keep row order: the first row wins
        self._sorted, self._order = _by_mix(mix32(keys), self._row_type)
        self._keys = keys  # in their own row order
        self._words = _words(keys)
        # answers to read-only query arrays (a plan's keys, asked again by the verdict table)
        self._answers: dict[int, tuple[Queries, npt.NDArray[np.signedinteger]]] = {}

    def __len__(self) -> int:
        return len(self._order)

    def first_rows(self) -> npt.NDArray[np.int64]:
        """For each row of the index's key array, the first row holding the same key.

        Rows of one key share a mix, so they are in one run of equal mixes in the sorted index,
        the first row first: a row whose run starts with its own key has that first row; the
        rare row whose run starts with another key (two keys sharing a mix) is looked up.
        """
        n = len(self._order)
        first = np.arange(n, dtype=np.int64)
        if n < 2:
            return first
        same = np.flatnonzero(self._sorted[1:] == self._sorted[:-1]) + 1  # positions in a run
        if not len(same):
            return first
        starts = np.flatnonzero(np.r_[True, self._sorted[1:] != self._sorted[:-1]])
        head = starts[np.searchsorted(starts, same, side="right") - 1]  # each one's run start
        rows, lead = self._order[same], self._order[head]
        equal = _same_at(self._words, rows, self._words, lead)
        first[rows[equal]] = lead[equal]
        other = rows[~equal]
        if len(other):  # a run shared by two keys: the row's own key is found, not assumed
            first[other] = self._find(self._keys[other], np.int64)
        return first

    def find(self, queries: Queries) -> npt.NDArray[np.int64]:
        """For each query key, the row of the index's key array holding it, or -1.

        The answer to fixed queries (a :class:`KeySource`, or a read-only array) is remembered
        (the queries are kept, so their id is not reused, and they cannot change): asking again
        for the same plan's keys costs nothing.
        """
        if _writeable(queries):
            return self._find(queries, np.int64)
        return self._remembered(queries).astype(np.int64)  # a copy: the caller may change it

    def rows(self, queries: Queries) -> npt.NDArray[np.signedinteger]:
        """:meth:`find` of fixed queries, as the remembered answer itself: read-only, in the
        index's row type (32-bit below 2**31 keys), no copy.

        Raises:
            ValueError: ``queries`` is a writeable array (only answers to fixed queries are
                kept).
        """
        if _writeable(queries):
            raise ValueError("only the answer to a read-only key array is remembered")
        out = self._remembered(queries).view()
        out.flags.writeable = False
        return out

    def remember(self, sources: Sequence[Queries]) -> None:
        """Find the rows of each fixed query set now (a :class:`KeySource` or a read-only key
        array), so that a later :meth:`find`, :meth:`rows` or :meth:`contains` of it costs
        nothing (a slice of queries at a time: a source's keys are computed a slice at a time,
        never whole).

        Raises:
            ValueError: an array is writeable (only answers to fixed queries are kept).
        """
        if any(_writeable(q) for q in sources):
            raise ValueError("only the answer to a read-only key array is remembered")
        for q in {id(q): q for q in sources if not self._known(q)}.values():
            self._answers[id(q)] = (q, self._find(q, self._row_type))

    def _known(self, queries: Queries) -> bool:
        seen = self._answers.get(id(queries))
        return seen is not None and seen[0] is queries

    def _remembered(self, queries: Queries) -> npt.NDArray[np.signedinteger]:
        if not self._known(queries):
            self.remember([queries])
        return self._answers[id(queries)][1]

    def _find(self, queries: Queries, row_type: type[np.signedinteger]) -> npt.NDArray[Any]:
        """The rows of ``queries`` (-1 where absent), a slice of :data:`_FIND_CHUNK` at a time:
        of an array, its slices; of a source, its keys computed a slice at a time."""
        part_of: Callable[[int, int], Keys]
        if isinstance(queries, np.ndarray):
            whole = np.ascontiguousarray(queries, dtype=np.uint8).reshape(-1, KEY_BYTES)
            n, part_of = len(whole), lambda start, stop: whole[start:stop]
        else:
            n, part_of = len(queries), queries.key_slice
        out = np.full(n, -1, dtype=row_type)
        if not len(self):
            return out
        for start in range(0, n, _FIND_CHUNK):
            self._find_slice(part_of(start, min(start + _FIND_CHUNK, n)), out, start)
        return out

    def _find_slice(self, q: Keys, out: npt.NDArray[np.signedinteger], start: int) -> None:
        """Set ``out[start : start + len(q)]`` for the queries ``q`` (a slice of at most
        :data:`_FIND_CHUNK`), sorted by mix (so that its search still walks the index in order),
        for a few megabytes of temporaries however many queries."""
        part = _words(q)
        mix, by_mix = _by_mix(mix32(part))
        pos = np.searchsorted(self._sorted, mix)
        self._resolve(mix, pos, part, by_mix, start, out)

    def _resolve(
        self,
        mix: npt.NDArray[np.uint32],
        pos: npt.NDArray[np.int64],
        part: Words,
        asked: npt.NDArray[np.signedinteger],
        start: int,
        out: npt.NDArray[np.signedinteger],
    ) -> None:
        """Set ``out[start + asked[i]]`` to the index row of query ``i`` (mix ``mix[i]``, key
        ``part[asked[i]]``, first candidate position ``pos[i]``) when the index holds it."""
        n = len(self._sorted)
        # the first candidate of every query at once (the usual answer: a hit, or a miss with no
        # row of its mix), without the bookkeeping of the walk below
        first = np.minimum(pos, n - 1)
        row = self._order[first]
        same = self._sorted[first] == mix
        same &= pos < n
        hit = _same_at(self._words, row, part, asked)
        hit &= same
        out[asked[hit] + start] = row[hit]
        # rows sharing a mix are next to each other: walk forward while the mix matches
        pending = np.flatnonzero(same & ~hit)
        pos = pos + 1
        while len(pending):
            p = pos[pending]
            ok = p < n
            pending, p = pending[ok], p[ok]
            same = self._sorted[p] == mix[pending]
            pending, p = pending[same], p[same]
            row = self._order[p]
            hit = _same_at(self._words, row, part, asked[pending])
            out[asked[pending[hit]] + start] = row[hit]
            pending = pending[~hit]
            pos[pending] += 1

    def contains(self, queries: Queries) -> npt.NDArray[np.bool_]:
        """For each query key, whether the index holds it (remembered as :meth:`find` is)."""
        if _writeable(queries):
            found: npt.NDArray[np.bool_] = self._find(queries, self._row_type) >= 0
            return found
        held: npt.NDArray[np.bool_] = self._remembered(queries) >= 0
        return held


__all__ = [
    "KEY_BYTES",
    "KeyIndex",
    "KeyScheme",
    "KeySource",
    "Keys",
    "Queries",
    "custom_id",
    "join_keys",
    "key_bytes",
    "key_from_custom_id",
    "keys_array",
]
