"""Every (response, check) pair of a judge, as arrays: computed once per run, in bulk."""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.compiler import Check
from scoring.judge.backends import Backend, BulkReply, JudgeRequest
from scoring.judge.inputs import ResponseUnit
from scoring.judge.judges import BuiltJudge
from scoring.ledger.keys import KeyIndex, Keys, KeyScheme, join_keys
from scoring.verdicts import PAIR_KEY

IntArray = npt.NDArray[np.int64]
CodeArray = npt.NDArray[np.signedinteger]


@dataclass
class CheckTable:
    """The distinct checks of the units (one row per question's check, in question order)."""

    checks: list[Check]
    question_ids: list[str]
    #: per unit: offset of its question's first check in ``checks``, and how many it has
    unit_offset: IntArray
    unit_count: IntArray
    _digests: dict[bool, npt.NDArray[np.uint8]] = field(default_factory=dict)

    #: per pair, the code of each id column (the smallest integer type that holds its codes)
    _codes: dict[str, tuple[CodeArray, list[str]]] = field(default_factory=dict)
    _ids_digest: str = ""

    def ids_digest(self, units: Sequence[ResponseUnit]) -> str:
        """A digest of every unit's ids and every check's id and attributes."""
        if not self._ids_digest:
            h = hashlib.sha256()
            h.update(
                "\0".join(
                    f"{u.submission_id}\0{u.setting.value}\0{u.question_id}" for u in units
                ).encode()
            )
            h.update(
                "\0".join(
                    f"{c.check_id}\0{c.kind.value}\0{c.tier.value}\0{c.secondary:d}"
                    for c in self.checks
                ).encode()
            )
            self._ids_digest = h.hexdigest()
        return self._ids_digest

    def pair_codes(
        self, units: Sequence[ResponseUnit], unit: IntArray, check: IntArray
    ) -> dict[str, tuple[CodeArray, list[str]]]:
        """Per pair: the code of each id and attribute column, and the values the codes name
        (sorted)."""
        if not self._codes:
            per_unit = {
                "submission_id": [u.submission_id for u in units],
                "setting": [u.setting.value for u in units],
                "question_id": [u.question_id for u in units],
            }
            per_check = {
                "check_id": [c.check_id for c in self.checks],
                "kind": [c.kind.value for c in self.checks],
                "tier": [c.tier.value for c in self.checks],
            }
            for cols, idx in ((per_unit, unit), (per_check, check)):
                for name, values in cols.items():
                    uniq = sorted(set(values))
                    code_of = {v: i for i, v in enumerate(uniq)}
                    dtype = np.int16 if len(uniq) <= np.iinfo(np.int16).max else np.int32
                    codes: CodeArray = np.fromiter((code_of[v] for v in values), dtype, len(values))
                    self._codes[name] = (codes[idx], uniq)
        return self._codes

    def digests(self, scheme: KeyScheme, by_ids: bool) -> npt.NDArray[np.uint8]:
        """The check half of each check's key (with its id, for judges keyed by ids; with its
        question's id, for keyed schemes: :meth:`KeyScheme.check_parts`)."""
        if by_ids not in self._digests:
            self._digests[by_ids] = scheme.digests(
                scheme.check_parts(c.kind.value, c.text, q, c.check_id if by_ids else None)
                for c, q in zip(self.checks, self.question_ids, strict=True)
            )
        return self._digests[by_ids]


def check_table(units: Sequence[ResponseUnit]) -> CheckTable:
    """The distinct checks of ``units`` (units of one question share its checks)."""
    checks: list[Check] = []
    qids: list[str] = []
    where: dict[str, tuple[int, int]] = {}
    offset = np.empty(len(units), dtype=np.int64)
    count = np.empty(len(units), dtype=np.int64)
    for i, u in enumerate(units):
        got = where.get(u.question_id)
        if got is None or got[1] != len(u.checks):
            got = (len(checks), len(u.checks))
            where[u.question_id] = got
            checks.extend(u.checks)
            qids.extend([u.question_id] * len(u.checks))
        offset[i], count[i] = got
    return CheckTable(checks, qids, offset, count)


@dataclass
class PairPlan:
    """One judge's pairs over the units."""

    judge: BuiltJudge
    units: Sequence[ResponseUnit]
    table: CheckTable
    unit: IntArray
    check: IntArray
    position: IntArray
    unit_digests: npt.NDArray[np.uint8]
    check_digests: npt.NDArray[np.uint8]
    empty: npt.NDArray[np.bool_]
    #: the unit whose shared prompt part was rendered last, and that part: a unit's pairs come
    #: one after another, so each response's part is rendered (its fence hashed) once
    _shared: tuple[int, str] = field(default=(-1, ""), repr=False, compare=False)
    #: the index last asked by :meth:`rows_in`, and its answer
    _found: tuple[KeyIndex, IntArray] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.unit)

    def keys_of(self, pairs: IntArray | slice = slice(None)) -> Keys:
        """The verdict keys of ``pairs`` (default: every pair), ``(n, 32)``, computed now."""
        return join_keys(self.unit_digests, self.check_digests, self.unit[pairs], self.check[pairs])

    def key_slice(self, start: int, stop: int) -> Keys:
        """The verdict keys of pairs ``start`` to ``stop`` (a key index asks a slice at a time)."""
        return self.keys_of(slice(start, stop))

    def rows_in(self, index: KeyIndex) -> IntArray:
        """Each pair's row in ``index`` (-1: not there), read-only; kept for the index last
        asked."""
        if self._found is None or self._found[0] is not index:
            rows = index.find(self)
            rows.flags.writeable = False
            self._found = (index, rows)
        return self._found[1]

    @cached_property
    def fingerprint(self) -> str:
        """A digest of everything the judge's part of the verdict table depends on but the
        ledger."""
        h = hashlib.sha256()
        j = self.judge
        for s in (j.name, j.label, j.identity):
            h.update(s.encode() + b"\0")
        for a in (self.unit_digests, self.check_digests, self.unit, self.check, self.empty):
            h.update(np.ascontiguousarray(a).data)
        h.update(self.table.ids_digest(self.units).encode())
        return h.hexdigest()

    def id_codes(self) -> dict[str, tuple[CodeArray, list[str]]]:
        """Per pair, the code of each id and attribute column, with the code's values."""
        return self.table.pair_codes(self.units, self.unit, self.check)

    def file_codes(self, pairs: IntArray | slice) -> tuple[IntArray, list[tuple[str, str]]]:
        """The response file (submission, setting) of each of ``pairs``, as a code, and the files
        the codes name: code ``i`` is ``files[i]``."""
        ids = self.id_codes()
        sub, subs = ids["submission_id"]
        st, settings = ids["setting"]
        codes: IntArray = sub[pairs].astype(np.int64) * len(settings) + st[pairs]
        return codes, [(s, t) for s in subs for t in settings]

    def id_columns(self, pairs: IntArray) -> dict[str, pa.Array]:
        """The ledger's id columns (submission, setting, question, check id) of ``pairs``."""
        out = {}
        for name, (codes, values) in self.id_codes().items():
            if name in PAIR_KEY:
                out[name] = pa.DictionaryArray.from_arrays(
                    pa.array(codes[pairs], pa.int32()), pa.array(values, pa.string())
                ).cast(pa.string())
        return out

    def request(self, i: int) -> JudgeRequest:
        """The request of pair ``i`` (rendered from the judge's prompt template)."""
        at = int(self.unit[i])
        u = self.units[at]
        ci = int(self.check[i])
        c = self.table.checks[ci]
        t = self.judge.template
        shared = self._shared  # one read: another thread may render another unit meanwhile
        if shared[0] != at:
            shared = self._shared = (at, t.render_shared(u.question, u.response))
        return JudgeRequest(
            u.submission_id,
            u.setting,
            u.question_id,
            c.check_id,
            c.kind,
            u.question,
            u.response,
            c.text,
            t.system,
            shared[1],
            self.check_prompt(ci),
        )

    def check_prompt(self, check: int) -> str:
        """The per-check tail of the prompt of check ``check`` of the table (as in
        :meth:`request`)."""
        c = self.table.checks[check]
        return self.judge.template.render_check(c.text, c.kind)


class BulkBackend(Backend):
    """A backend that answers many pairs at once, needing no calls (replay)."""

    @abstractmethod
    def bulk(self, plan: PairPlan, pairs: IntArray) -> BulkReply:
        """Verdicts for the ``pairs`` of ``plan`` in one go."""


def pair_plans(
    units: Sequence[ResponseUnit], judges: Sequence[BuiltJudge], scheme: KeyScheme
) -> list[PairPlan]:
    """One :class:`PairPlan` per judge, sharing one check table and its digests."""
    table = check_table(units)
    count = table.unit_count
    n = int(count.sum())
    unit = np.repeat(np.arange(len(units), dtype=np.int64), count)
    starts = np.cumsum(count) - count
    position = np.arange(n, dtype=np.int64) - np.repeat(starts, count)
    check = np.repeat(table.unit_offset, count) + position
    empty_unit = np.fromiter((not u.response.strip() for u in units), bool, len(units))
    empty = empty_unit[unit]
    out = []
    base: dict[bool, npt.NDArray[np.uint8]] = {}
    for j in judges:
        by_ids = j.backend.keyed_by_ids
        if by_ids not in base:
            base[by_ids] = scheme.digests(
                (u.question, u.response, u.submission_id, u.setting.value, u.question_id)
                if by_ids
                else (u.question, u.response)
                for u in units
            )
        unit_digests = scheme.digests_of_hex(base[by_ids], lead=(j.identity,))
        checks = table.digests(scheme, by_ids)
        for a in (unit_digests, checks, unit, check, empty):
            a.flags.writeable = False  # fixed for the plan's life
        out.append(PairPlan(j, units, table, unit, check, position, unit_digests, checks, empty))
    return out
