"""The verdict table (ARCHITECTURE.md, "The verdict table"), built from the ledger."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.compiler import CheckKind
from scoring.csvcells import write_frame_csv
from scoring.errors import GamutError
from scoring.judge.pairs import PairPlan
from scoring.judge.usage import UsageSums, dictionary_codes, grouped, write_usage_frame
from scoring.layout import with_provenance
from scoring.ledger import VERDICTS, Ledger
from scoring.questions import Setting
from scoring.rubric import Tier
from scoring.storage import atomic_write, atomic_write_text
from scoring.verdicts import FINGERPRINT, STAMPS, VERDICT_COLUMNS, Verdict, verdict_column_order

EMPTY_RATIONALE = "The response is empty."
_FIXED = {
    "setting": [x.value for x in Setting],
    "kind": [x.value for x in CheckKind],
    "tier": [x.value for x in Tier],
}
_VERDICTS = [x.value for x in Verdict]
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
    h = hashlib.sha256(f"v2 {public} {judge_ids}".encode())  # v2: the table carries STAMPS
    for p in plans:
        h.update(p.fingerprint.encode())
    for name in [*ledger.shard_names(VERDICTS), *ledger.order_state()]:
        h.update(name.encode())
    return h.hexdigest()


def _recoded(
    codes: Any, values: list[str], fixed: list[str] | None = None
) -> tuple[Any, list[str]]:
    """The codes and categories of ``values[codes]`` over every ``fixed`` value, else over the
    values used, in the order of ``values``."""
    if fixed is not None:
        remap = np.array([fixed.index(v) for v in values], dtype=np.int64)
        return remap[codes], fixed
    used = np.bincount(codes, minlength=len(values)) > 0
    renumber = (np.cumsum(used) - 1).astype(codes.dtype)  # the new code of each used value
    return renumber[codes], [values[i] for i in np.flatnonzero(used)]


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
    """Every verdict in the ledger of the planned pairs, as a table (columnar throughout)."""
    table, _ = _arrow_part(plans, _stored(ledger, public), public=public)
    df: pd.DataFrame = table.to_pandas()
    if judge_ids:
        by_name = {p.judge.name: p.judge.label for p in plans}
        judges = df["judge"].cat
        labels = np.array([by_name[n] for n in judges.categories], dtype=object)
        df.insert(list(df.columns).index("judge") + 1, "judge_id", labels[judges.codes.to_numpy()])
    return df


#: Judge name -> submission id -> setting -> the model snapshots its provider reported.
Snapshots = dict[str, dict[str, dict[str, list[str]]]]


class _Snapshots:
    """Collects per judge, submission and setting the model snapshots the ledger records for a
    table's verdicts (the model column read once, when first needed)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.found: Snapshots = {}
        self._codes: tuple[npt.NDArray[np.signedinteger], list[str]] | None = None

    def add(self, plan: PairPlan, rows: Any, coded: tuple[Any, list[tuple[str, str]]]) -> None:
        """The snapshots of some of ``plan``'s pairs: their ledger ``rows`` (-1: empty) and
        files."""
        mine = self.found.setdefault(plan.judge.name, {})
        judged = rows >= 0
        if not judged.any():
            return
        if self._codes is None:
            self._codes = dictionary_codes(self.ledger.indexed_column("model"))
        m_codes, models = self._codes
        files, names = coded
        combo, _ = grouped(files[judged] * len(models) + m_codes[rows[judged]],
                           len(names) * len(models))  # fmt: skip
        for file, m in zip(*np.divmod(combo, len(models)), strict=True):
            sub, setting = names[file]
            got = mine.setdefault(sub, {}).setdefault(setting, [])
            if models[m] and models[m] not in got:
                got.append(models[m])
        for per_setting in mine.values():
            for got in per_setting.values():
                got.sort()


def stamps_record(plans: list[PairPlan], rubric_version: str, snapshots: Snapshots) -> str:
    """What judged a verdict table's rows, as the JSON its :data:`STAMPS` metadata holds
    (:mod:`scoring.tables.stamps` reads it)."""
    return json.dumps(
        {
            "rubric_version": rubric_version,
            "judges": {
                p.judge.name: {
                    "model": p.judge.config.model,
                    "prompt_version": p.judge.template.version,
                    "prompt_digest": p.judge.template.digest,
                    "snapshots": snapshots.get(p.judge.name, {}),
                }
                for p in plans
            },
        },
        sort_keys=True,
    )


@dataclass
class _Rows:
    """A verdict table's rows as codes per column, with each row's judge, check, ledger row and
    empty flag; ``every``: every pair of the plans has a row."""

    codes: dict[str, Any]
    judge: Any
    check: Any
    ledger_row: Any
    empty: Any
    every: bool


def _gather(
    plans: list[PairPlan],
    stored_index: tuple[pa.Table, Any, Any],
    collectors: tuple[_Snapshots | UsageSums, ...] = (),
) -> _Rows:
    """Every pair of ``plans`` with a verdict (or ``missing`` for an empty response), in plan order,
    given to each of ``collectors`` with its ledger row."""
    _, index, codes_v = stored_index
    parts: dict[str, list[Any]] = {}
    judge_codes: list[Any] = []
    rat_rows: list[Any] = []
    empties: list[Any] = []
    every = True
    for n, p in enumerate(plans):
        row = p.rows_in(index)  # all -1 when the index is empty
        keep = p.empty | (row >= 0)
        # every pair has its verdict (the usual case): the plan's own arrays, not copies
        sel: Any = slice(None) if keep.all() else np.flatnonzero(keep)
        every = every and isinstance(sel, slice)
        verdict = np.where(p.empty[sel], Verdict.MISSING.code, codes_v[np.maximum(row[sel], 0)])
        parts.setdefault("verdict", []).append(verdict)
        for name, (codes, _) in p.id_codes().items():
            parts.setdefault(name, []).append(codes[sel])
        parts.setdefault("check", []).append(p.check[sel])
        judge_codes.append(np.full(len(verdict), n, np.int32))
        rat_rows.append(row[sel])
        empties.append(p.empty[sel])
        if collectors:
            judged, files = np.where(p.empty[sel], -1, row[sel]), p.file_codes(sel)
            for c in collectors:
                c.add(p, judged, files)
    cat = {k: _joined(v) for k, v in parts.items()}
    check = cat.pop("check", np.empty(0, np.int64))
    return _Rows(cat, _joined(judge_codes), check, _joined(rat_rows), _joined(empties, bool), every)


def _columns(
    plans: list[PairPlan], rows: _Rows, make: Any, skip: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The columns of :data:`VERDICT_COLUMNS` but those in ``skip``: each categorical one made
    by ``make(codes, categories)`` (pandas or Arrow), ``secondary`` a bool array."""
    data: dict[str, Any] = {}
    codes0 = plans[0].id_codes() if plans else {}
    for name in VERDICT_COLUMNS:
        if name in skip:
            continue
        if name == "judge":
            data[name] = make(*_recoded(rows.judge, [p.judge.name for p in plans]))
        elif name == "verdict":
            data[name] = make(rows.codes.get("verdict", np.empty(0, np.int8)), _VERDICTS)
        elif name == "secondary":
            sec = np.array([c.secondary for c in plans[0].table.checks], bool) if plans else None
            data[name] = sec[rows.check] if sec is not None else np.empty(0, bool)
        elif plans:
            data[name] = make(*_recoded(rows.codes[name], codes0[name][1], _FIXED.get(name)))
        else:
            data[name] = make(np.empty(0, np.int32), _FIXED.get(name, []))
    return data


def _texts(plans: list[PairPlan], stored: pa.Table, rows: _Rows) -> tuple[Any, Any]:
    """The ``rationale`` and ``check_text`` of each row (public rubrics only), as object
    arrays."""
    rat = stored["rationale"].to_numpy(zero_copy_only=False) if stored.num_rows else None
    texts = np.array([c.text for c in plans[0].table.checks], dtype=object) if plans else None
    why = np.full(len(rows.ledger_row), EMPTY_RATIONALE, dtype=object)
    if rat is not None:
        why[~rows.empty] = rat[rows.ledger_row[~rows.empty]]
    return why, texts[rows.check] if texts is not None else np.empty(0, object)


def _arrow_dictionary(codes: Any, categories: list[str]) -> pa.Array:
    """``categories[codes]`` as an Arrow dictionary array with 32-bit codes."""
    return pa.DictionaryArray.from_arrays(
        pa.array(np.asarray(codes, np.int32)), pa.array(categories, pa.string())
    )


#: The columns of a verdict table that differ between two judges of the same pairs.
_PER_JUDGE = frozenset({"judge", "verdict", "rationale"})


def _arrow_part(
    plans: list[PairPlan],
    stored_index: tuple[pa.Table, Any, Any],
    *,
    public: bool,
    collectors: tuple[_Snapshots | UsageSums, ...] = (),
    like: tuple[PairPlan, pa.Table] | None = None,
) -> tuple[pa.Table, bool]:
    """The rows of ``plans`` as an Arrow table of 32-bit dictionary columns, and whether every pair
    has a row."""
    rows = _gather(plans, stored_index, collectors)
    skip: frozenset[str] = frozenset()
    if like is not None and rows.every and len(plans) == 1 and _same_pairs(plans[0], like[0]):
        skip = frozenset(like[1].column_names) - _PER_JUDGE
    data = _columns(plans, rows, _arrow_dictionary, skip)
    if "secondary" not in skip:
        data["secondary"] = pa.array(data["secondary"], pa.bool_())
    if public:
        why, text = _texts(plans, stored_index[0], rows)
        data["rationale"] = pa.array(why, pa.string())
        if "check_text" not in skip:
            data["check_text"] = pa.array(text, pa.string())
    names = [*VERDICT_COLUMNS, *(("rationale", "check_text") if public else ())]
    for n in skip:
        data[n] = like[1].column(n) if like is not None else None
    return pa.table({n: data[n] for n in names}), rows.every


def _same_pairs(a: PairPlan, b: PairPlan) -> bool:
    """Whether two plans have the same pairs in the same order (judges of one set of units)."""
    return a.table is b.table and a.unit is b.unit and a.check is b.check and a.units is b.units


def write_verdict_parts(
    plans: list[PairPlan],
    ledger: Ledger,
    out: Path,
    *,
    public: bool,
    rubric_version: str,
    fingerprint: str = "",
    usage_out: Path | None = None,
) -> Path:
    """Write the verdict table of ``plans`` to ``out`` one judge at a time (one row group each)."""
    stored_index = _stored(ledger, public)
    snapshots = _Snapshots(ledger)
    usage = UsageSums(ledger) if usage_out is not None else None
    collectors = (snapshots,) if usage is None else (snapshots, usage)

    def write(tmp: Path) -> None:
        writer: pq.ParquetWriter | None = None
        try:
            like: tuple[PairPlan, pa.Table] | None = None
            for group in [[p] for p in plans] or [[]]:
                table, every = _arrow_part(
                    group, stored_index, public=public, collectors=collectors, like=like
                )
                if like is None and every and group:
                    like = (group[0], table)  # the next judges' id columns are its own
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
                if not table.schema.equals(writer.schema):
                    table = table.cast(writer.schema)
                writer.write_table(table)
                del table
            if writer is not None:  # known once every judge's rows are built
                writer.add_key_value_metadata(
                    {STAMPS.decode(): stamps_record(plans, rubric_version, snapshots.found)}
                )
        finally:
            if writer is not None:
                writer.close()

    atomic_write(out, write)
    if usage_out is not None and usage is not None:
        write_usage_frame(usage.frame(), usage_out, fingerprint)
    return out


def _part_schema(first: pa.Schema, meta: dict[bytes, bytes]) -> pa.Schema:
    """The verdict table's file schema from its first part: null columns as strings and 32-bit
    dictionary codes, so that every later part casts to it."""
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
    """Export the verdict table ``df`` (with ``judge_id``) to ``out``; returns the rows."""
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
            table = pa.Table.from_pandas(df, preserve_index=False)
            if provenance is not None:
                table = with_provenance(table, provenance)
            pq.write_table(table, tmp)

        atomic_write(out, parquet)
    elif suffix == ".csv":
        atomic_write(out, lambda tmp: write_frame_csv(df, tmp))
    else:
        # U+2028/U+2029 escaped, as dumps_line writes them: no line splitter breaks a row
        text = df.to_json(orient="records", lines=True, force_ascii=False) or ""
        atomic_write_text(out, text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return len(df)
