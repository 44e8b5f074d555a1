"""The verdict ledger: a folder of append-only Parquet shards.

Layout::

    LEDGER.json                  {"format": 1, "scheme": "...", "held": true}
    verdicts/<name>.parquet      verdict rows
    failures/<name>.parquet      failure rows
    batches/<name>.parquet       batch-state rows
    pushes/<name>.json           push records: the order in which pushed shards count

Each shard is written once, atomically, named by the SHA-256 of its bytes (held: their HMAC,
:mod:`scoring.ledger.checks`), so ledgers merge by copying the files one lacks. A shard's Parquet
metadata names its kind and key scheme. Names starting with ``.`` (the lock, a pull's staging
folder) are local. The first verdict of a key wins, shards in the order of
:mod:`scoring.ledger.order`; a later, different verdict is a duplicate, kept and never scored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import io
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scoring.errors import GamutError, Problem
from scoring.ledger.checks import (
    META_KEY,
    code_problem,
    metadata_problem,
    shard_meta,
    shard_name,
    shard_problems,
    size_problem,
    unreadable,
    write_parts,
)
from scoring.ledger.keys import (
    KEY_BYTES,
    KEYED_V1_PREFIX,
    KEYED_VERSION,
    KeyIndex,
    Keys,
    KeyScheme,
)
from scoring.ledger.order import (
    COMPACTIONS,
    PUSHES,
    RECORD,
    Compaction,
    PushRecord,
    honoured,
    ranks,
    read_compactions,
    read_records,
    record_bytes,
    record_name,
    record_problem,
    sort_keys,
)
from scoring.ledger.records import (
    BATCHES,
    FAILURES,
    KINDS,
    VERDICTS,
    BatchState,
    FailureRecord,
    VerdictRecord,
    batch_states,
    batch_table,
    failure_table,
    schema,
    verdict_table,
    verdict_word,
)
from scoring.storage import atomic_write, atomic_write_bytes, atomic_write_text, open_regular
from scoring.verdicts import PAIR_KEY

FORMAT = 1
MANIFEST = "LEDGER.json"
_SHARD = re.compile(r"^[0-9a-f]{64}\.parquet$")


@dataclass(frozen=True)
class Conflict:
    """One key judged twice with different verdicts: ``ours`` counts, ``theirs`` is kept aside."""

    key: bytes
    judge: str
    ids: str
    ours: str
    theirs: str

    def __str__(self) -> str:
        return (
            f"{self.judge} {self.ids} (key {self.key.hex()[:16]}...): "
            f"{self.ours} counts, {self.theirs} kept aside"
        )


@dataclass
class MergeReport:
    """What :func:`merge` copied, and the merged ledger's duplicates (with a few examples)."""

    copied: dict[str, list[str]] = field(default_factory=dict)
    duplicates: int = 0
    examples: list[Conflict] = field(default_factory=list)

    @property
    def n_copied(self) -> int:
        """Shards copied."""
        return sum(len(v) for v in self.copied.values())


def shard_bytes(table: pa.Table, kind: str, scheme: KeyScheme, held: bool) -> bytes:
    """A shard's file content: ``table`` as Parquet, with the ledger's metadata."""
    want = schema(kind, held)
    if not table.schema.equals(want, check_metadata=False):
        raise GamutError(f"a {kind} shard must have the columns {want.names}")
    meta = json.dumps({"format": FORMAT, "kind": kind, "scheme": scheme.scheme_id, "held": held})
    table = table.replace_schema_metadata({META_KEY: meta.encode()})
    buf = io.BytesIO()
    pq.write_table(
        table,
        buf,
        compression="zstd",
        use_dictionary=[
            c for c in table.column_names if c not in ("key", "keys", "rationale", "raw")
        ],
    )
    return buf.getvalue()


class Ledger:
    """One ledger folder (held: shards carry no free text); open with :meth:`open`."""

    def __init__(self, root: Path, scheme: KeyScheme, held: bool) -> None:
        self.root = root
        self.scheme = scheme
        self.held = held
        # (verdict shard names, identities) -> the key index and the table it indexes
        self._index: tuple[tuple[object, ...], KeyIndex, pa.Table] | None = None
        # (record names, the records they hold): read again when the names change
        self._records: tuple[tuple[str, ...], list[PushRecord]] | None = None
        self._compactions: tuple[tuple[str, ...], list[Compaction]] | None = None

    @classmethod
    def open(cls, root: Path, scheme: KeyScheme, *, held: bool, create: bool = True) -> Ledger:
        """Open (or create) the ledger at ``root``.

        Raises:
            GamutError: held without a keyed scheme, a broken manifest, or a ledger written
                under another key scheme or held setting.
        """
        if held and not scheme.held:
            raise GamutError(
                "rubrics are held, so ledger keys must be keyed hashes: set [store] "
                "ledger_key_env to an environment variable holding the ledger secret"
            )
        path = root / MANIFEST
        want = {"format": FORMAT, "scheme": scheme.scheme_id, "held": held}
        if not os.path.lexists(path):
            if not create:
                raise GamutError(f"no ledger at {root} (no {MANIFEST})")
            root.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(want, indent=1) + "\n", durable=True)
            return cls(root, scheme, held)
        try:
            with open_regular(path) as f:
                got = json.loads(f.read(10_000).decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GamutError(f"{path}: not a ledger manifest ({exc})") from None
        if not isinstance(got, dict) or got.get("format") != FORMAT:
            raise GamutError(f"{path}: ledger format {got!r} is not {FORMAT}")
        if str(got.get("scheme")).startswith(KEYED_V1_PREFIX) and got.get("held") is True:
            raise GamutError(
                f"{path}: this ledger was written under held key scheme 1 "
                f"({got.get('scheme')!r}), whose check keys leave out the question id; this "
                f"version reads scheme {KEYED_VERSION} only and cannot convert it (the keys "
                "hash text it does not keep): start a new [store] ledger folder (and a new "
                "[store] ledger_hub dataset), and judge into it"
            )
        if got.get("scheme") != want["scheme"] or got.get("held") != held:
            raise GamutError(
                f"{path}: this ledger was written with keys {got.get('scheme')!r} "
                f"(held={got.get('held')}), the config gives {want['scheme']!r} (held={held}): "
                "another ledger secret or rubric setting; use the matching secret, or another "
                "[store] ledger folder"
            )
        return cls(root, scheme, held)

    # -- writing ---------------------------------------------------------------------------

    def write_shard(self, kind: str, table: pa.Table) -> str | None:
        """Write ``table`` as new shards of ``kind`` (several when too large); returns the last
        one's name (None when empty). The same rows twice give the same names and no new file."""
        name = None
        for part in write_parts(table) if table.num_rows else []:
            data = shard_bytes(part, kind, self.scheme, self.held)
            name = shard_name(data, self.scheme)
            path = self.root / kind / name
            if not path.exists():
                atomic_write_bytes(path, data, durable=True)
        return name

    def append_verdicts(self, records: Sequence[VerdictRecord] | pa.Table) -> str | None:
        """Append verdicts as one shard."""
        table = records if isinstance(records, pa.Table) else verdict_table(records, self.held)
        if self.held and "rationale" in table.column_names:
            table = table.drop_columns(["rationale"])
        return self.write_shard(VERDICTS, table)

    def append_failures(self, records: Sequence[FailureRecord]) -> str | None:
        """Append failures as one shard (held: without message or raw reply)."""
        return self.write_shard(FAILURES, failure_table(records, self.held))

    def append_batch_states(self, states: Sequence[BatchState]) -> str | None:
        """Append batch state changes as one shard."""
        return self.write_shard(BATCHES, batch_table(states))

    # -- reading ---------------------------------------------------------------------------

    def shard_names(self, kind: str) -> list[str]:
        """Names of the shards of ``kind``, sorted."""
        return _names(self.root / kind, _SHARD)

    def read_shard(
        self,
        kind: str,
        name: str,
        columns: Sequence[str] | None = None,
        dictionaries: Sequence[str] = (),
    ) -> pa.Table:
        """One shard's rows, the columns in ``dictionaries`` as dictionary arrays.

        Raises:
            GamutError: unreadable, too large, or not a shard of this ledger.
        """
        path = self.root / kind / name
        fix = "run `gamut ledger verify`, and restore it from another copy (or remove it)"
        try:
            with open_regular(path) as file:
                bad = size_problem(file)
                coded = list(dictionaries) or None
                f = None if bad else pq.ParquetFile(file, read_dictionary=coded)
                bad = bad or metadata_problem(f.metadata)  # type: ignore[union-attr]
                if bad or f is None:
                    raise GamutError(f"{path}: not read: {bad}; {fix}")
                meta = shard_meta(f.schema_arrow)
                table = f.read(columns=list(columns) if columns is not None else None)
        except (OSError, pa.ArrowException) as exc:
            raise GamutError(f"{path}: cannot read this shard ({exc}); {fix}") from None
        if meta.get("kind") != kind or meta.get("scheme") != self.scheme.scheme_id:
            raise GamutError(f"{path}: a foreign shard ({meta}); run `gamut ledger verify`")
        bad = code_problem(table["verdict"]) if "verdict" in table.column_names else None
        if bad:
            raise GamutError(f"{path}: not read: {bad}; {fix}")
        return table

    def _read_all(
        self,
        kind: str,
        columns: Sequence[str] | None,
        identities: Iterable[str] | None,
        dictionaries: Sequence[str] = (),
    ) -> pa.Table:
        parts = self._parts(kind, columns, identities, None, dictionaries)
        return self._joined(kind, [part for *_, part in parts], columns)

    def _joined(self, kind: str, parts: list[pa.Table], columns: Sequence[str] | None) -> pa.Table:
        if parts:
            return pa.concat_tables(parts, promote_options="none")
        table = schema(kind, self.held).empty_table()
        return table if columns is None else table.select(list(columns))

    def _parts(
        self,
        kind: str,
        columns: Sequence[str] | None,
        identities: Iterable[str] | None,
        shards: list[tuple[str, int]] | None = None,
        dictionaries: Sequence[str] = (),
    ) -> Iterator[tuple[str, int, int, pa.Table]]:
        """Each shard of ``kind`` oldest first: its name, the rows its metadata counts, the rows
        read, and its rows of the given identities with ``columns``. One shard held at a time."""
        want = None if columns is None else list(columns)
        ids = None if identities is None else pa.array(sorted(set(identities)), pa.string())
        if want is not None and ids is not None and "judge_identity" not in want:
            want.append("judge_identity")
        for name, counted in self._ordered_rows(kind) if shards is None else shards:
            shard = self.read_shard(kind, name, want, dictionaries)
            read = shard.num_rows
            if ids is not None:
                shard = shard.filter(pc.is_in(shard["judge_identity"], value_set=ids))
            if columns is not None:
                shard = shard.select(list(columns))
            yield name, counted, read, shard
            del shard

    def shards_oldest_first(self, kind: str) -> list[str]:
        """Names of the shards of ``kind`` in the order their rows count."""
        return [name for name, _ in self._ordered_rows(kind)]

    def ordered_paths(self) -> list[str]:
        """Every shard's path (``kind/name``), each kind in the order its rows count."""
        return [f"{kind}/{name}" for kind in KINDS for name in self.shards_oldest_first(kind)]

    def record_names(self, folder: str = PUSHES) -> list[str]:
        """Names of the push records (or of the compaction records), sorted."""
        return _names(self.root / folder, RECORD)

    def order_state(self) -> list[str]:
        """The names of every push and compaction record (they order the shards)."""
        return [*self.record_names(PUSHES), *(f"c/{n}" for n in self.record_names(COMPACTIONS))]

    def reading_order(self) -> tuple[dict[str, int], list[Compaction], set[str]]:
        """The pushed shards' ranks, the compactions that count, and the paths they replace."""
        rank = ranks(self.push_records())
        present = {f"{k}/{n}" for k in KINDS for n in self.shard_names(k)}
        names = tuple(self.record_names(COMPACTIONS))
        if self._compactions is None or self._compactions[0] != names:
            self._compactions = (names, read_compactions(self.root, self.scheme))
        done = honoured(self._compactions[1], rank, present)
        _, replaced = sort_keys(rank, done)
        return rank, done, replaced

    def push_records(self) -> list[PushRecord]:
        """The push records in the remote's commit order (read again when their names change)."""
        names = tuple(self.record_names(PUSHES))
        if self._records is None or self._records[0] != names:
            self._records = (names, read_records(self.root, self.scheme))
        return self._records[1]

    def add_push_record(self, after: str | None, shards: list[str]) -> str:
        """Write the record of a landed push (its shards, after ``after``); returns its name."""
        data = record_bytes(after, shards)
        name = record_name(data, self.scheme)
        path = self.root / PUSHES / name
        if not path.exists():
            atomic_write_bytes(path, data, durable=True)
        return name

    def _ordered_rows(self, kind: str) -> list[tuple[str, int]]:
        """Shard names in the order their rows count (pushed in commit order, then by first row
        time, then name), each with its metadata's row count (0 when unreadable)."""
        col = {VERDICTS: "created_at", FAILURES: "failed_at", BATCHES: "updated_at"}[kind]
        rank, done, _ = self.reading_order()
        where, replaced = sort_keys(rank, done)
        unpushed = (len(rank), 2, "", 0)
        times: list[tuple[tuple[int, int, str, int], int, str, int]] = []
        for name in self.shard_names(kind):
            if f"{kind}/{name}" in replaced:
                continue  # its rows are in a compaction's shards, which count in its place
            try:
                md = shard_metadata(self.root / kind / name)
                idx = md.schema.to_arrow_schema().get_field_index(col)
                stats = (md.row_group(i).column(idx).statistics for i in range(md.num_row_groups))
                lo = min((s.min for s in stats if s is not None), default=None)
                rows = md.num_rows
            except (OSError, pa.ArrowException):
                lo, rows = None, 0  # read_shard names the problem
            t = 0 if lo is None else int(lo.timestamp() * 1e6)
            times.append((where.get(f"{kind}/{name}", unpushed), t, name, rows))
        return [(name, rows) for _, _, name, rows in sorted(times)]

    def verdicts(
        self, columns: Sequence[str] | None = None, identities: Iterable[str] | None = None
    ) -> pa.Table:
        """Every verdict row (of the given judge identities), oldest shard first, duplicates too."""
        return self._read_all(VERDICTS, columns, identities)

    def key_index(
        self, identities: Iterable[str] | None = None, columns: Sequence[str] = ("verdict",)
    ) -> tuple[KeyIndex, pa.Table]:
        """A :class:`KeyIndex` over every verdict key (of the given identities) and the rows'
        ``columns`` in its row order; kept while the verdict shards stay the same, so one run's
        steps share it."""
        want = [c for c in dict.fromkeys(columns) if c != "key"]
        state = self._index_state(identities)
        if self._index is not None and self._index[0] == state:
            _, index, table = self._index
            if set(want) <= set(table.column_names):
                return index, table.select(want)
            # the same rows in the same order (shards are read oldest first), more columns
            table = self._read_all(VERDICTS, want, identities, _coded(want))
        else:
            keys, table = self._keys_and_rows(want, identities)
            index = KeyIndex(keys)
            del keys
        self._index = (state, index, table)
        return index, table

    def indexed_column(
        self, column: str, identities: Iterable[str] | None = None
    ) -> Iterator[pa.Array]:
        """One more column of the kept :meth:`key_index`'s rows, one array per shard, never held
        whole.

        Raises:
            GamutError: the verdict shards changed since the index was built.
        """
        state = self._index_state(identities)
        if self._index is None or self._index[0] != state:
            raise GamutError(
                f"{self.root / VERDICTS}: the verdict shards changed while a run read them "
                "(a pull or a compaction at the same time); run the command again"
            )
        for _, _, _, part in self._parts(VERDICTS, [column], identities, None, _coded([column])):
            yield from part[column].chunks

    def _index_state(self, identities: Iterable[str] | None) -> tuple[object, ...]:
        ident = None if identities is None else tuple(sorted(set(identities)))
        return (tuple(self.shard_names(VERDICTS)), tuple(self.order_state()), ident)

    def _keys_and_rows(
        self, want: list[str], identities: Iterable[str] | None
    ) -> tuple[Keys, pa.Table]:
        """Every verdict key oldest shard first, as one read-only array, and the rows' ``want``
        columns. Each shard's keys go straight into room counted from the metadata, so the keys
        are never held twice (170 MB less at paper scale).

        Raises:
            GamutError: a shard cannot be read, or holds more rows than its metadata counts.
        """
        shards = self._ordered_rows(VERDICTS)
        keys = np.empty((sum(rows for _, rows in shards), KEY_BYTES), dtype=np.uint8)
        parts = []
        at = 0
        coded = _coded(want)
        for name, counted, read, shard in self._parts(
            VERDICTS, ["key", *want], identities, shards, coded
        ):
            if read > counted:
                raise GamutError(
                    f"{self.root / VERDICTS / name}: holds {read} rows, its metadata "
                    f"counts {counted}; run `gamut ledger verify`, and restore it from another copy"
                )
            got = key_column(shard["key"])
            keys[at : at + len(got)] = got
            at += len(got)
            parts.append(shard.select(want))
            del shard, got
        keys = keys[:at]
        keys.flags.writeable = False  # the index keeps it as it is: nobody changes it
        return keys, self._joined(VERDICTS, parts, want)

    def failures(self, identities: Iterable[str] | None = None) -> list[FailureRecord]:
        """The latest failure of each key that has no verdict (of the given identities)."""
        t = self._read_all(FAILURES, None, identities)
        if t.num_rows == 0:
            return []
        index, _ = self.key_index(identities)
        done = index.contains(key_column(t["key"]))
        latest: dict[bytes, FailureRecord] = {}
        for row, is_done in zip(t.to_pylist(), done, strict=True):
            if is_done:
                continue
            rec = FailureRecord(**{k: v for k, v in row.items()})
            prev = latest.get(rec.key)
            if prev is None or rec.failed_at >= prev.failed_at:
                latest[rec.key] = rec
        return sorted(
            latest.values(),
            key=lambda r: (r.judge, r.submission_id, r.setting, r.question_id, r.check_id),
        )

    def batch_states(self, identities: Iterable[str] | None = None) -> list[BatchState]:
        """Every batch-state row (of the given judge identities), oldest first."""
        return batch_states(self._read_all(BATCHES, None, identities))

    def latest_batch_states(self, identities: Iterable[str] | None = None) -> list[BatchState]:
        """The latest state of each batch (greatest ``updated_at``, then later shard), by batch
        id, carrying over keys recorded on an earlier row when the latest has none."""
        wanted = None if identities is None else set(identities)
        latest: dict[str, BatchState] = {}
        keys: dict[str, tuple[tuple[bytes, ...], pa.StructArray]] = {}
        for s in self.batch_states(wanted):
            if s.keys:
                keys[s.batch_id] = s.keys, s.requests
            prev = latest.get(s.batch_id)
            if prev is None or s.updated_at >= prev.updated_at:
                latest[s.batch_id] = s
        out = []
        for bid, s in sorted(latest.items()):
            if not s.keys and bid in keys:
                s = dataclasses.replace(s, keys=keys[bid][0], requests=keys[bid][1])
            out.append(s)
        return out

    # -- checking --------------------------------------------------------------------------

    def verify(self) -> list[Problem]:
        """Every problem in the ledger: stray files, unsound shards and records (a key judged
        twice is no problem: :meth:`duplicates` counts those)."""
        problems: list[Problem] = []
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if any(p.startswith(".") for p in rel.parts) or str(rel) == MANIFEST:
                continue
            if len(rel.parts) == 1 and stat.S_ISDIR(path.lstat().st_mode):
                continue  # a folder's files are checked one by one
            if len(rel.parts) == 2 and rel.parts[0] in (PUSHES, COMPACTIONS):
                problems.extend(self.verify_record(path))
                continue
            if len(rel.parts) != 2 or rel.parts[0] not in KINDS or not _SHARD.match(rel.name):
                problems.append(
                    Problem(str(path), None, "not a ledger shard", "remove it from the ledger")
                )
                continue
            problems.extend(self.verify_shard(rel.parts[0], path))
        return problems

    def verify_record(self, path: Path) -> list[Problem]:
        """The problems of one push or compaction record file."""
        fix = "restore it from another copy of the ledger (gamut ledger pull), or remove it"
        try:
            bad = record_problem(path, self.scheme)
        except OSError as exc:
            return [unreadable(path, exc, fix)]
        what = "compaction record" if path.parent.name == COMPACTIONS else "push record"
        return [Problem(str(path), None, f"{what} {bad}", fix)] if bad else []

    def verify_shard(self, kind: str, path: Path) -> list[Problem]:
        """The problems of one shard file of ``kind`` (empty when sound)."""
        return shard_problems(path, kind, self.scheme, self.held)

    def duplicates(self, limit: int = 20) -> tuple[int, list[Conflict]]:
        """The count of verdicts kept aside (a key's later row with another verdict), and up to
        ``limit`` of them, one per key."""
        index, table = self.key_index()  # the index of this state of the ledger, kept
        first = index.first_rows()
        v = table["verdict"].to_numpy()
        rows = np.flatnonzero(v[first] != v)
        if not len(rows):
            return 0, []
        cols = ["key", "judge", *PAIR_KEY]
        t = self.verdicts(cols)  # the same rows in the same order; read only when needed
        _, pick = np.unique(first[rows], return_index=True)
        out = []
        for i in rows[np.sort(pick)][:limit]:
            r = t.slice(int(i), 1).to_pylist()[0]
            ids = "/".join(r[c] for c in cols[2:])
            won, lost = verdict_word(int(v[first[i]])), verdict_word(int(v[i]))
            out.append(Conflict(r["key"], r["judge"], ids, won.value, lost.value))
        return len(rows), out

    @contextlib.contextmanager
    def lock(self, what: str = "gamut judge") -> Iterator[None]:
        """Hold the ledger's writer lock (the kernel drops it when the process ends).

        Raises:
            GamutError: another process holds it.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise GamutError(
                    f"another {what} is writing the ledger {self.root}; wait for it to finish "
                    "(or stop it), then rerun"
                ) from None
            yield
        finally:
            os.close(fd)


def merge(into: Ledger, other: Ledger) -> MergeReport:
    """Copy into ``into`` every shard and record of ``other`` it lacks, after checking ``other``
    (a key judged differently in both is a duplicate, counted, never an error).

    Raises:
        GamutError: ``other`` has a corrupted, forged or foreign file (named), or another key
            scheme.
    """
    if other.scheme.scheme_id != into.scheme.scheme_id or other.held != into.held:
        raise GamutError(
            f"cannot merge {other.root} into {into.root}: written under keys "
            f"{other.scheme.scheme_id!r} (held={other.held}), not {into.scheme.scheme_id!r} "
            f"(held={into.held})"
        )
    bad = other.verify()
    if bad:
        raise GamutError(f"cannot merge {other.root}: " + "; ".join(str(p) for p in bad[:10]))
    return copy_checked(into, other)


def copy_checked(into: Ledger, other: Ledger) -> MergeReport:
    """:func:`merge` without checking ``other`` (a pull's staging folder, checked already)."""
    report = MergeReport()
    for kind in (*KINDS, PUSHES, COMPACTIONS):
        records = kind in (PUSHES, COMPACTIONS)
        have = set(into.record_names(kind) if records else into.shard_names(kind))
        names = other.record_names(kind) if records else other.shard_names(kind)
        for name in names:
            if name in have:
                continue
            atomic_write(
                into.root / kind / name,
                functools.partial(_copy_to, other.root / kind / name),
                durable=True,
            )
            report.copied.setdefault(kind, []).append(name)
    report.duplicates, report.examples = into.duplicates()
    return report


def _copy_to(src: Path, tmp: Path) -> None:
    with open_regular(src) as f, tmp.open("wb") as out:
        shutil.copyfileobj(f, out)


def shard_metadata(path: Path) -> pq.FileMetaData:
    """The Parquet metadata of the shard file ``path``."""
    with open_regular(path) as f:
        return pq.ParquetFile(f).metadata


def _names(folder: Path, pattern: re.Pattern[str]) -> list[str]:
    """The sorted names in ``folder`` that match ``pattern`` (none when it is not a folder)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if pattern.match(p.name))


def _coded(columns: Sequence[str]) -> list[str]:
    """The columns the key index's table reads as dictionary arrays (few values each)."""
    return [c for c in columns if c in ("model", "source")]


def key_column(col: pa.ChunkedArray | pa.Array) -> Keys:
    """A ledger ``key`` column as an ``(n, KEY_BYTES)`` uint8 array (zero-copy per chunk)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = []
    for c in chunks:
        if c.null_count:
            raise GamutError("a ledger shard has a null key")
        buf = c.buffers()[1]
        start = c.offset * KEY_BYTES
        arr = np.frombuffer(buf, dtype=np.uint8)[start : start + len(c) * KEY_BYTES]
        parts.append(arr.reshape(-1, KEY_BYTES))
    if not parts:
        return np.empty((0, KEY_BYTES), dtype=np.uint8)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
