"""Verdict keys: 32 bytes, a 16-byte *unit digest* (judge identity, question and response text,
plus ids for judges keyed by ids) then a 16-byte *check digest* (check kind and text, plus the
check id for judges keyed by ids, plus the question id when held).

Each half is a truncated SHA-256 (public rubrics) or HMAC-SHA256 under a key derived from the
ledger secret (held), so a held ledger's copy cannot confirm a guess of a check's or response's
text, nor tell that two questions share a check text. The shard MAC key is derived under another
label, so no key digest is a valid shard MAC. A pair's key is two rows of two digest arrays
joined (no per-pair hashing); a batch ``custom_id`` is the key in hex.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from scoring.errors import GamutError

#: Bytes in a key; each half (unit digest, check digest) is ``KEY_BYTES // 2``.
KEY_BYTES = 32
HALF = KEY_BYTES // 2
#: The smallest ledger secret accepted, in bytes.
MIN_SECRET_BYTES = 32
#: Keyed scheme 2 puts the question id in the check digest and derives its keys from the secret
#: (version 1 keyed with the secret itself, no question id).
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
    """The parts as bytes, each after its 8-byte length (no two lists give the same bytes)."""
    out: list[bytes] = []
    for p in parts:  # once per response and per check at paper scale: no per-part concatenation
        b = p.encode("utf-8", "surrogatepass")
        out += (_LENGTH(len(b)), b)
    return b"".join(out)


@dataclass(frozen=True)
class KeyScheme:
    """How keys are hashed: SHA-256 (:meth:`public`) or HMAC-SHA256 (:meth:`keyed`)."""

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
        """``sha256``, or :data:`KEYED_PREFIX` and a fingerprint of the secret (revealing nothing
        of it): shards of another scheme are foreign."""
        if self.secret is None:
            return "sha256"
        tag = hmac.new(self.secret, b"gamut ledger key fingerprint", hashlib.sha256).hexdigest()
        return f"{KEYED_PREFIX}{tag[:16]}"

    @property
    def mac_key(self) -> bytes | None:
        """The key of the shards' MACs (None for a public scheme)."""
        return None if self.secret is None else self._mac_key

    def check_parts(
        self, kind: str, text: str, question_id: str, check_id: str | None = None
    ) -> tuple[str, ...]:
        """The parts of a check digest: kind, text (and check id for judges keyed by ids); keyed
        schemes put the question id first so equal check texts of two questions differ."""
        tail = (kind, text) if check_id is None else (kind, text, check_id)
        return (question_id, *tail) if self.secret is not None else tail

    def digest(self, *parts: str) -> bytes:
        """A 16-byte digest of the parts, unambiguously framed."""
        msg = _frame(parts)
        if self.secret is None:
            return hashlib.sha256(msg).digest()[:HALF]
        return hmac.new(self._keys_key, msg, hashlib.sha256).digest()[:HALF]

    def digests_of_hex(
        self, halves: npt.NDArray[np.uint8], lead: Sequence[str] = ()
    ) -> npt.NDArray[np.uint8]:
        """:meth:`digests` of ``(d.hex(),)`` for each row ``d`` of the ``(n, 16)`` array ``halves``
        (every row's length is the same, so it is hashed once with the shared parts)."""
        if halves.ndim != 2 or halves.shape[1] != HALF:
            raise ValueError(f"digests_of_hex takes an (n, {HALF}) array, not {halves.shape}")
        width = 2 * HALF
        digits = np.ascontiguousarray(halves).tobytes().hex().encode("ascii")
        rows = (digits[i : i + width] for i in range(0, len(digits), width))
        return self._digests_framed(rows, _frame(lead) + width.to_bytes(8, "little"))

    def digests(
        self, rows: Iterable[Sequence[str]], lead: Sequence[str] = ()
    ) -> npt.NDArray[np.uint8]:
        """An ``(n, 16)`` array: :meth:`digest` of ``(*lead, *row)`` for each row, the shared
        parts hashed once. HMAC is spelled out (RFC 2104) so a row costs two hashlib state copies
        and no HMAC object: half the time at paper scale."""
        return self._digests_framed((_frame(r) for r in rows), _frame(lead))

    def _digests_framed(self, messages: Iterable[bytes], shared: bytes) -> npt.NDArray[np.uint8]:
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


def sort_key(keys: Keys | Words) -> npt.NDArray[np.uint32]:
    """What an index sorts keys by: the high 32 bits of the unit half's first word XOR the check
    half's (digests spread evenly; both halves count as one response's keys share a unit half).
    Different keys may share it: lookups compare whole keys."""
    w = np.ascontiguousarray(keys).view(np.uint64)
    both = w[:, 0] ^ w[:, 2]
    both >>= np.uint64(32)
    out: npt.NDArray[np.uint32] = both.astype(np.uint32)
    return out


def _sorted(sk: npt.NDArray[np.uint32]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """``sk`` sorted and its stable order: each value sorted with its row number in the low 32
    bits of one 64-bit value (distinct values, so NumPy's fast sort is stable)."""
    if len(sk) > 1 << 32:  # row numbers that do not fit 32 bits
        order = np.argsort(sk, kind="stable")
        return sk[order], order
    both = sk.astype(np.uint64)
    both <<= np.uint64(32)
    both |= np.arange(len(sk), dtype=np.uint64)
    both.sort()
    rows = (both & np.uint64(0xFFFFFFFF)).astype(np.int64)
    both >>= np.uint64(32)
    return both.astype(np.uint32), rows


def _same_at(
    a: Words, ia: npt.NDArray[np.integer], b: Words, ib: npt.NDArray[np.integer]
) -> npt.NDArray[np.bool_]:
    """Whether key ``a[ia[i]]`` is key ``b[ib[i]]``, for each ``i``."""
    ra, rb = np.take(a, ia, axis=0), np.take(b, ib, axis=0)
    out: npt.NDArray[np.bool_] = ra[:, 0] == rb[:, 0]
    for w in range(1, a.shape[1]):
        out &= ra[:, w] == rb[:, w]
    return out


class KeySource(Protocol):
    """Keys computed a slice at a time, never held whole (:class:`scoring.judge.pairs.PairPlan`)."""

    def __len__(self) -> int: ...

    def key_slice(self, start: int, stop: int) -> Keys:
        """The keys of rows ``start`` to ``stop`` (``(stop - start, KEY_BYTES)``)."""
        ...


#: What a :class:`KeyIndex` is asked: a key array, or a :class:`KeySource`.
Queries = Keys | KeySource


class KeyIndex:
    """A sorted index over ``(n, KEY_BYTES)`` keys (the first row of a key wins): a lookup is a
    sorted join, whole keys compared. A writeable array is copied, a read-only one kept."""

    def __init__(self, keys: Keys) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.uint8).reshape(-1, KEY_BYTES)
        if keys.flags.writeable:
            keys = keys.copy()
            keys.flags.writeable = False
        self._sorted, self._order = _sorted(sort_key(keys))  # equal keys: the first row first
        self._keys = keys
        self._words = _words(keys)

    def __len__(self) -> int:
        return len(self._order)

    def first_rows(self) -> npt.NDArray[np.int64]:
        """For each row of the index's key array, the first row holding the same key."""
        n = len(self._order)
        first = np.arange(n, dtype=np.int64)
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
            first[other] = self.find(self._keys[other])
        return first

    def find(self, queries: Queries) -> npt.NDArray[np.int64]:
        """For each query key, the index row holding it, or -1 (:data:`_FIND_CHUNK` at a time)."""
        part_of: Callable[[int, int], Keys]
        if isinstance(queries, np.ndarray):
            whole = np.ascontiguousarray(queries, dtype=np.uint8).reshape(-1, KEY_BYTES)
            n, part_of = len(whole), lambda start, stop: whole[start:stop]
        else:
            n, part_of = len(queries), queries.key_slice
        out = np.full(n, -1, dtype=np.int64)
        if len(self):
            for start in range(0, n, _FIND_CHUNK):
                stop = min(start + _FIND_CHUNK, n)
                out[start:stop] = self._find_slice(_words(part_of(start, stop)))
        return out

    def contains(self, queries: Queries) -> npt.NDArray[np.bool_]:
        """For each query key, whether the index holds it."""
        held: npt.NDArray[np.bool_] = self.find(queries) >= 0
        return held

    def _find_slice(self, part: Words) -> npt.NDArray[np.int64]:
        """:meth:`find` of one slice: sorted and searched; a query whose sort key's first row
        holds another key is matched by whole key among the rows sharing its sort key."""
        sk, asked = _sorted(sort_key(part))
        pos = np.minimum(np.searchsorted(self._sorted, sk), len(self._sorted) - 1)
        row = self._order[pos]
        shared = self._sorted[pos] == sk
        hit = shared & _same_at(self._words, row, part, asked)
        out = np.full(len(part), -1, dtype=np.int64)
        out[asked[hit]] = row[hit]
        other = asked[shared & ~hit]
        if len(other):
            out[other] = self._by_whole_key(part[other])
        return out

    def _by_whole_key(self, part: Words) -> npt.NDArray[np.int64]:
        """The rows of the keys ``part`` by whole key among the rows sharing their sort keys (keys
        chosen to share a sort key cost linear time, not quadratic)."""
        sk = np.unique(sort_key(part))
        lo, hi = np.searchsorted(self._sorted, sk), np.searchsorted(self._sorted, sk, "right")
        rows = np.sort(np.concatenate([self._order[a:b] for a, b in zip(lo, hi, strict=True)]))
        stored = key_bytes(self._keys[rows])[::-1]  # reversed: the first row of a key wins
        first = dict(zip(stored, rows.tolist()[::-1], strict=True))
        return np.array([first.get(k, -1) for k in key_bytes(part.view(np.uint8))], np.int64)
