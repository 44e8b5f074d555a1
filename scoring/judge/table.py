"""The verdict table (ARCHITECTURE.md, "The verdict table"), built from the ledger.

One row per (submission, setting, judge, question, check) of the current submissions and rubrics
that has a verdict. An empty response has ``missing`` on every check (no call was made). Rationale
and check text are included only when rubrics are public.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring import process
from scoring.compiler import CheckKind
from scoring.errors import GamutError
from scoring.judge.pairs import PairPlan
from scoring.ledger import Ledger
from scoring.questions import Setting
from scoring.rubric import Tier
from scoring.storage import atomic_write, atomic_write_text
from scoring.tables.csvcells import write_frame_csv
from scoring.verdicts import VERDICT_COLUMNS, Verdict, verdict_column_order

EMPTY_RATIONALE = "The response is empty."
_FIXED = {
    "setting": [x.value for x in Setting],
    "kind": [x.value for x in CheckKind],
    "tier": [x.value for x in Tier],
}
#: Parquet metadata key of the digest of everything a verdict table was built from.
FINGERPRINT = b"gamut.fingerprint"
#: Rows handed to the Parquet encoder at a time: its default, 1,024, spends a third of the
#: encoding time on per-batch work at paper scale (the rows written are the same).
WRITE_BATCH = 1 << 16
#: Columns with min/max statistics in the verdict table: those a reader filters by (a row group
#: is one judge's rows). The statistics of the question and check ids, which no reader uses, were
#: a third of the table's encoding time at paper scale.
STATS_COLUMNS = ["submission_id", "setting", "judge"]


def table_fingerprint(
    plans: list[PairPlan], ledger: Ledger, *, public: bool, judge_ids: bool
) -> str:
    """A digest of every input of the verdict table: the plans, the ledger's verdict shards and
    the options. Equal fingerprints give equal tables."""
    h = hashlib.sha256(f"v1 {public} {judge_ids}".encode())
    for p in plans:
        h.update(p.fingerprint.encode())
    for name in [*ledger.shard_names("verdicts"), *ledger.order_state()]:
        h.update(name.encode())
    return h.hexdigest()


def categorical(codes: Any, values: list[str], fixed: list[str] | None = None) -> Any:
    """A categorical of ``values[codes]``: over every ``fixed`` value, else over the values
    used, in the order of ``values`` (what ``remove_unused_categories`` gives, counted in one
    pass instead of sorted)."""
    if fixed is not None:
        remap = np.array([fixed.index(v) for v in values], dtype=np.int64)
        return pd.Categorical.from_codes(remap[codes], categories=pd.Index(fixed))
    used = np.bincount(codes, minlength=len(values)) > 0
    renumber = (np.cumsum(used) - 1).astype(codes.dtype)  # the new code of each used value
    return pd.Categorical.from_codes(
        renumber[codes], categories=pd.Index(values)[np.flatnonzero(used)]
    )


def _joined(parts: list[Any], dtype: Any = np.int64) -> Any:
    """The arrays of ``parts`` end to end (one part as it is, not copied)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype)


def _stored(ledger: Ledger, public: bool) -> tuple[pa.Table, Any, Any]:
    """The ledger's verdicts (key, code, rationale when public), a key index and the codes."""
    index, stored = ledger.key_index(columns=["verdict"] + (["rationale"] if public else []))
    codes_v = stored["verdict"].to_numpy() if stored.num_rows else np.zeros(1, np.int8)
    return stored, index, codes_v


def verdict_frame(
    plans: list[PairPlan],
    ledger: Ledger,
    *,
    public: bool,
    judge_ids: bool = False,
) -> pd.DataFrame:
    """Every verdict in the ledger of the planned pairs, as a table (columnar throughout).

    Args:
        plans: the judges' pairs over the current units (:func:`scoring.judge.pairs.pair_plans`).
        ledger: the store of record.
        public: rubrics are public: add the ``rationale`` and ``check_text`` columns.
        judge_ids: add a ``judge_id`` column (provider:model@prompt-version) after ``judge``.
    """
    return _frame(plans, _stored(ledger, public), public=public, judge_ids=judge_ids)


def _frame(
    plans: list[PairPlan],
    stored_index: tuple[pa.Table, Any, Any],
    *,
    public: bool,
    judge_ids: bool,
) -> pd.DataFrame:
    stored, index, codes_v = stored_index
    parts: dict[str, list[Any]] = {}
    judge_codes: list[Any] = []
    rat_rows: list[Any] = []
    empties: list[Any] = []
    for n, p in enumerate(plans):
        row = index.find(p.keys) if len(index) else np.full(len(p), -1, np.int64)
        keep = p.empty | (row >= 0)
        # every pair has its verdict (the usual case): the plan's own arrays, not copies
        sel: Any = slice(None) if keep.all() else np.flatnonzero(keep)
        verdict = np.where(p.empty[sel], Verdict.MISSING.code, codes_v[np.maximum(row[sel], 0)])
        parts.setdefault("verdict", []).append(verdict)
        for name, (codes, _) in p.id_codes().items():
            parts.setdefault(name, []).append(codes[sel])
        parts.setdefault("check", []).append(p.check[sel])
        judge_codes.append(np.full(len(verdict), n, np.int32))
        rat_rows.append(row[sel])
        empties.append(p.empty[sel])
    cat = {k: _joined(v) for k, v in parts.items()}
    data: dict[str, object] = {}
    codes0 = plans[0].id_codes() if plans else {}
    for name in VERDICT_COLUMNS:
        if name == "judge":
            data[name] = categorical(_joined(judge_codes), [p.judge.name for p in plans])
        elif name == "verdict":
            data[name] = pd.Categorical.from_codes(
                cat["verdict"], categories=pd.Index([x.value for x in Verdict])
            )
        elif name == "secondary":
            sec = np.array([c.secondary for c in plans[0].table.checks], bool) if plans else None
            data[name] = sec[cat["check"]] if sec is not None else np.empty(0, bool)
        elif plans:
            data[name] = categorical(cat[name], codes0[name][1], _FIXED.get(name))
        else:
            data[name] = pd.Categorical([], categories=_FIXED.get(name, []))
    df = pd.DataFrame(data, columns=list(VERDICT_COLUMNS))
    df["secondary"] = df["secondary"].astype(bool)
    if judge_ids:
        labels = np.array([p.judge.label for p in plans], dtype=object)
        df.insert(list(df.columns).index("judge") + 1, "judge_id", labels[_joined(judge_codes)])
    if public:
        rat = stored["rationale"].to_numpy(zero_copy_only=False) if stored.num_rows else None
        rows = _joined(rat_rows)
        empty = _joined(empties, bool)
        texts = np.array([c.text for c in plans[0].table.checks], dtype=object) if plans else None
        why = np.full(len(rows), EMPTY_RATIONALE, dtype=object)
        if rat is not None:
            why[~empty] = rat[rows[~empty]]
        df["rationale"] = why
        df["check_text"] = texts[cat["check"]] if texts is not None else []
    return df


def write_verdict_table(df: pd.DataFrame, out: Path, fingerprint: str = "") -> Path:
    """Write the verdict table ``df`` (from :func:`verdict_frame`) to ``out``; returns ``out``.

    ``fingerprint`` (from :func:`table_fingerprint`) is stored in the file's metadata, so
    :func:`table_is_current` can tell that a rebuild would write the same table.
    """

    def write(tmp: Path) -> None:
        table = pa.Table.from_pandas(df, preserve_index=False, nthreads=process.ARROW_THREADS)
        meta = dict(table.schema.metadata or {})
        if fingerprint:
            meta[FINGERPRINT] = fingerprint.encode()
        pq.write_table(table.replace_schema_metadata(meta), tmp, write_statistics=STATS_COLUMNS)

    atomic_write(out, write)
    return out


def write_verdict_parts(
    plans: list[PairPlan], ledger: Ledger, out: Path, *, public: bool, fingerprint: str = ""
) -> Path:
    """Write the verdict table of ``plans`` to ``out`` one judge at a time (one row group each).

    The same rows as :func:`write_verdict_table` of :func:`verdict_frame`, with a third of the
    memory at three judges: only one judge's rows are built and written at a time. Returns
    ``out``.
    """
    stored_index = _stored(ledger, public)

    def write(tmp: Path) -> None:
        writer: pq.ParquetWriter | None = None
        try:
            for group in [[p] for p in plans] or [[]]:
                part = _frame(group, stored_index, public=public, judge_ids=False)
                table = pa.Table.from_pandas(
                    part, preserve_index=False, nthreads=process.ARROW_THREADS
                )
                del part
                if writer is None:
                    meta = dict(table.schema.metadata or {})
                    if fingerprint:
                        meta[FINGERPRINT] = fingerprint.encode()
                    writer = pq.ParquetWriter(
                        tmp,
                        _part_schema(table.schema, meta),
                        write_batch_size=WRITE_BATCH,
                        write_statistics=STATS_COLUMNS,
                    )
                writer.write_table(table.cast(writer.schema))
                del table
        finally:
            if writer is not None:
                writer.close()

    atomic_write(out, write)
    return out


def _part_schema(first: pa.Schema, meta: dict[bytes, bytes]) -> pa.Schema:
    """The file schema of the verdict table, from its first judge's part: a column that part
    leaves untyped (no rows: Arrow's null type) is a string column, and every categorical has
    32-bit codes, so that each later judge's part casts to it whatever its rows."""
    fields = []
    for f in first:
        t = f.type
        if pa.types.is_null(t):
            t = pa.string()
        elif pa.types.is_dictionary(t):
            values = pa.string() if pa.types.is_null(t.value_type) else t.value_type
            t = pa.dictionary(pa.int32(), values)
        fields.append(f.with_type(t))
    return pa.schema(fields, metadata=meta)


def table_is_current(out: Path, fingerprint: str) -> bool:
    """Whether the verdict table at ``out`` was built from inputs with this fingerprint."""
    try:
        meta = pq.read_schema(out).metadata or {}
    except (OSError, pa.ArrowException):
        return False
    return meta.get(FINGERPRINT) == fingerprint.encode()


def export_verdicts(df: pd.DataFrame, out: Path, provenance: dict[str, Any] | None = None) -> int:
    """Export the verdict table ``df`` (with ``judge_id``) to ``out``; returns the rows.

    The format follows the extension: ``.parquet``, ``.csv`` or ``.jsonl``. The columns are
    those of :class:`~scoring.verdicts.VerdictRow`, in its order, so every row validates against
    ``verdict-row.schema.json`` (``gamut schema``). A Parquet file carries ``provenance``, when
    given, as file metadata (``gamut.provenance``), as every published Parquet file does.

    Raises:
        GamutError: for any other extension, or a column the row definition does not have.
    """
    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv", ".jsonl"):
        raise GamutError(f"cannot export to {out.name!r}: use a .parquet, .csv or .jsonl file")
    try:
        order = verdict_column_order(df.columns)
    except ValueError as exc:
        raise GamutError(f"cannot export the verdicts: {exc}") from None
    if list(df.columns) != order:
        df = df[order]
    if suffix == ".parquet":

        def parquet(tmp: Path) -> None:
            table = pa.Table.from_pandas(df, preserve_index=False, nthreads=process.ARROW_THREADS)
            if provenance is not None:
                meta = dict(table.schema.metadata or {})
                meta[b"gamut.provenance"] = json.dumps(provenance, sort_keys=True).encode()
                table = table.replace_schema_metadata(meta)
            pq.write_table(table, tmp)

        atomic_write(out, parquet)
    elif suffix == ".csv":
        atomic_write(out, lambda tmp: write_frame_csv(df, tmp))
    else:
        # U+2028/U+2029 escaped, as dumps_line writes them: no line splitter breaks a row
        text = df.to_json(orient="records", lines=True, force_ascii=False) or ""
        atomic_write_text(out, text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return len(df)


__all__ = [
    "EMPTY_RATIONALE",
    "export_verdicts",
    "table_fingerprint",
    "table_is_current",
    "verdict_frame",
    "write_verdict_parts",
    "write_verdict_table",
]
