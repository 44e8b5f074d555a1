"""CSV cells that a spreadsheet cannot run as formulas: the one CSV writer of the project.

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
apostrophe (OWASP, "CSV Injection"), so a submitter's ``=HYPERLINK(...)`` shows as text. Numbers
and booleans are left alone; Parquet and JSON keep every value as it is.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import cast

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_START: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
_PATTERN = "^[" + re.escape("".join(FORMULA_START)) + "]"
PREFIX = "'"


def neutralise(text: str) -> str:
    """``text`` with an apostrophe in front when a spreadsheet would read it as a formula."""
    return PREFIX + text if text.startswith(FORMULA_START) else text


def _neutralise_series(s: pd.Series) -> pd.Series:
    if isinstance(s.dtype, pd.CategoricalDtype):
        renamed = [_cell(c) for c in s.cat.categories]
        if len(set(renamed)) == len(renamed):  # fix the few categories, not the many rows
            return s.cat.rename_categories(renamed)
        s = s.astype(object)
    if s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
        hit = s.str.startswith(FORMULA_START).fillna(False).astype(bool)
        if hit.any():
            s = s.copy()
            s[hit] = PREFIX + s[hit].astype(str)
    return s


def _cell(value: object) -> object:
    return neutralise(value) if isinstance(value, str) else value


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells are safe to open in a spreadsheet."""
    return pd.DataFrame({c: _neutralise_series(df[c]) for c in df.columns}, index=df.index)


def _neutralise_array(arr: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(arr.type):
        encoded = cast(pa.DictionaryArray, arr)
        return pa.DictionaryArray.from_arrays(
            encoded.indices, _neutralise_array(encoded.dictionary)
        )
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    hit = pc.fill_null(pc.match_substring_regex(arr, _PATTERN), False)
    if not pc.any(hit).as_py():
        return arr
    prefix, empty = pa.scalar(PREFIX, arr.type), pa.scalar("", arr.type)
    return pc.if_else(hit, pc.binary_join_element_wise(prefix, arr, empty), arr)


def neutralise_table(table: pa.Table) -> pa.Table:
    """``table`` with its text cells safe to open in a spreadsheet (dictionary columns are fixed
    in their dictionaries, so millions of rows cost nothing)."""
    columns = []
    for col in table.columns:
        columns.append(pa.chunked_array([_neutralise_array(c) for c in col.chunks], col.type))
    return pa.Table.from_arrays(columns, schema=table.schema)


def table_text_csv(table: pa.Table) -> str:
    """A small table as CSV text the way pandas writes a frame (minimal quoting, ``\\n``, empty cell
    for null or NaN, shortest numbers), formula-like cells neutralised; several times faster than
    pandas for the score tables (tests compare the two)."""
    columns = []
    for col in neutralise_table(table).columns:
        if pa.types.is_floating(col.type) and pc.any(pc.is_nan(col)).as_py():
            col = pc.if_else(pc.is_nan(col), pa.scalar(None, col.type), col)  # written empty
        columns.append(col.to_pylist())
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(table.column_names)
    out.writerows(zip(*columns, strict=True))
    return buf.getvalue()


def write_frame_csv(df: pd.DataFrame, path: Path) -> None:
    """Write ``df`` as CSV to ``path`` (not atomic: pass a temporary path)."""
    neutralise_frame(df).to_csv(path, index=False, lineterminator="\n")


def write_table_csv(table: pa.Table, sink: pa.NativeFile | Path, *, header: bool = True) -> None:
    """Write an Arrow table as CSV (dictionary columns decoded), formula-like cells
    neutralised."""
    plain = neutralise_table(table)
    fields = [
        pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
        for f in plain.schema
    ]
    out = str(sink) if isinstance(sink, Path) else sink
    pacsv.write_csv(plain.cast(pa.schema(fields)), out, pacsv.WriteOptions(include_header=header))
