"""The published verdict and response tables, as the site's downloads and the Hugging Face
dataset carry them. Built column-wise on the dictionary codes: millions of rows in about a second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.errors import GamutError
from scoring.tables.columns import TABLES, arrow_type
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_TEXT_COLUMNS, verdict_column_order


def _narrow(col: pa.ChunkedArray) -> pa.Array:
    """One array; dictionary columns keep their dictionary with the narrowest index type."""
    arr = col.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        return arr
    enc = cast(pa.DictionaryArray, arr)
    n = len(enc.dictionary)
    kind = pa.int8() if n < 127 else pa.int16() if n < 32_000 else pa.int32()
    values = enc.dictionary
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    return pa.DictionaryArray.from_arrays(enc.indices.cast(kind), values)


def codes(arr: pa.Array) -> tuple[npt.NDArray[np.int64], list[str]]:
    """A string column as (int codes, values); nulls get code 0."""
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode()
    enc = cast(pa.DictionaryArray, arr)
    idx = enc.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    return idx, [str(v) for v in enc.dictionary.to_pylist()]


def _mapped(arr: pa.Array, mapping: dict[str, str], what: str) -> pa.DictionaryArray:
    """A dictionary column of ``mapping[value]`` for every value of ``arr`` (dictionary-wise)."""
    idx, values = codes(arr)
    unknown = sorted(v for v in values if v not in mapping)
    if unknown:
        raise GamutError(f"verdicts.parquet names {what} with no entry: {', '.join(unknown[:5])}")
    labels = sorted({mapping[v] for v in values})
    pos = {v: i for i, v in enumerate(labels)}
    lut = np.array([pos[mapping[v]] for v in values], dtype=np.int32)
    indices = pa.array(lut[idx] if len(idx) else [], pa.int32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(labels, pa.string()))


def verdict_table(
    source: Path, public: bool, judge_ids: dict[str, str], domains: dict[str, str]
) -> pa.Table:
    """The published verdict table, read from ``source``: the columns of ``gamut export verdicts``
    plus ``domain``, in :class:`~scoring.verdicts.VerdictRow` order, text columns only when
    ``public``; rows grouped by submission, strings dictionary-encoded."""
    names = pq.read_schema(source).names
    keep = [c for c in VERDICT_COLUMNS if c in names]
    if public:
        keep += [c for c in VERDICT_TEXT_COLUMNS if c in names]
    raw = pq.read_table(source, columns=keep)
    cols = {c: _narrow(raw.column(c)) for c in keep}
    del raw
    cols["judge_id"] = _mapped(cols["judge"], judge_ids, "judges")
    cols["domain"] = _mapped(cols["question_id"], domains, "questions")
    table = pa.table({c: cols[c] for c in verdict_column_order(cols)})
    sub, _ = codes(cols["submission_id"])
    if len(sub) and bool((np.diff(sub) < 0).any()):
        table = table.take(pa.array(np.argsort(sub, kind="stable")))
    return table


def judge_ids(provenance: dict[str, Any]) -> dict[str, str]:
    """Judge name -> ``provider:model@prompt-version``, as ``gamut export verdicts`` writes it."""
    out: dict[str, str] = {}
    for name, j in (provenance.get("judges") or {}).items():
        if isinstance(j, dict):
            version = j.get("prompt_template") or j.get("prompt_version")
            out[str(name)] = f"{j.get('provider')}:{j.get('model')}@{version}"
    return out


def submission_slices(table: pa.Table) -> dict[str, pa.Table]:
    """Zero-copy slices of a table grouped by submission (as :func:`verdict_table` returns)."""
    sub, names = codes(table.column("submission_id").combine_chunks())
    bounds = np.r_[np.flatnonzero(np.diff(sub, prepend=-1)), len(sub)]  # each submission's rows
    return {names[int(sub[s])]: table.slice(int(s), int(e - s)) for s, e in pairwise(bounds)}


def response_table(
    responses: Mapping[tuple[str, str], Mapping[str, str]], question_ids: Sequence[str]
) -> pa.Table:
    """The published responses, from (submission_id, setting) -> question id -> text: one row
    per (submission, setting, question), sorted by submission and setting, questions in
    ``question_ids`` order."""
    order = {q: i for i, q in enumerate(question_ids)}
    cols: dict[str, list[Any]] = {c: [] for c in TABLES["responses"]}
    for (sid, setting), texts in sorted(responses.items()):
        for qid in sorted(texts, key=lambda q: order.get(q, len(order))):
            text = texts[qid]
            for c, v in zip(cols, (sid, setting, qid, text, len(text)), strict=True):
                cols[c].append(v)
    return pa.table({c: pa.array(v, arrow_type("responses", c)) for c, v in cols.items()})


def published_types(name: str, table: pa.Table) -> pa.Table:
    """``table`` in the schema every published copy of table ``name`` has (``datasets`` reads
    each config as one table): text as plain ``string`` (dictionary-encoded in the verdict table,
    a sixth of the memory), and an all-null column as its documented type."""
    for i, field in enumerate(table.schema):
        col = table.column(i)
        kind = col.type
        if pa.types.is_dictionary(kind) and name != "verdicts":
            col = col.cast(pa.string())
        elif pa.types.is_dictionary(kind) and kind.value_type != pa.string():
            col = col.cast(pa.dictionary(kind.index_type, pa.string()))
        elif pa.types.is_large_string(kind):
            col = col.cast(pa.string())
        if pa.types.is_null(col.type) and field.name in TABLES.get(name, {}):
            col = col.cast(arrow_type(name, field.name))
        if col is not table.column(i):
            table = table.set_column(i, pa.field(field.name, col.type), col)
    return table
