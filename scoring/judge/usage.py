"""What judging the verdict table used: calls and tokens per (submission, setting, judge,
source)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.storage import atomic_write
from scoring.verdicts import FINGERPRINT, USAGE_TABLE

if TYPE_CHECKING:  # the score step reads the table without the judge's or the ledger's code
    from scoring.judge.pairs import PairPlan
    from scoring.ledger import Ledger

#: Its columns: one row per (submission, setting, judge, source) with a verdict.
USAGE_COLUMNS = (
    "submission_id",
    "setting",
    "judge",
    "source",
    "n_verdicts",
    "calls",
    "tokens_in",
    "tokens_cached",
    "tokens_out",
)
_COUNTS = USAGE_COLUMNS[5:]


def usage_path(verdict_table: Path) -> Path:
    """Where the usage table of the verdict table at ``verdict_table`` is."""
    return verdict_table.with_name(USAGE_TABLE)


def dictionary_codes(chunks: Iterable[pa.Array]) -> tuple[npt.NDArray[np.signedinteger], list[str]]:
    """Codes of a string column given in (dictionary or plain) chunks, and the values they name in
    order of first appearance, never decoding the column; codes of the smallest integer type."""
    lookup: dict[str, int] = {}
    parts = []
    for chunk in chunks:
        enc = chunk if pa.types.is_dictionary(chunk.type) else chunk.dictionary_encode()
        names = [str(v) for v in enc.dictionary.to_pylist()]
        lut = np.array([lookup.setdefault(v, len(lookup)) for v in names], np.int32)
        parts.append(lut[enc.indices.to_numpy(zero_copy_only=False)])
    dtype: type[np.signedinteger[Any]] = (
        np.int8 if len(lookup) <= 127 else np.int16 if len(lookup) <= 32767 else np.int32
    )
    out: npt.NDArray[np.signedinteger] = np.empty(sum(len(x) for x in parts), dtype)
    at = 0
    for x in parts:
        out[at : at + len(x)] = x
        at += len(x)
    return out, list(lookup)


def grouped(group: npt.NDArray[np.int64], n_groups: int) -> tuple[Any, Any]:
    """The groups used among ``group`` (codes below ``n_groups``), sorted, and each row's place
    among them: by counting when the groups are few against the rows, else by sorting."""
    if n_groups <= 4 * len(group) + 1024:
        used = np.flatnonzero(np.bincount(group, minlength=n_groups))
        place = np.empty(n_groups, np.int64)
        place[used] = np.arange(len(used))
        return used, place[group]
    return np.unique(group, return_inverse=True)


class UsageSums:
    """Sums, per judge, the calls and tokens the ledger records with the verdicts of the pairs it is
    given (:meth:`add`), per (submission, setting, source); :meth:`frame` is the table."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._sources: list[str] = []
        self._source: npt.NDArray[np.signedinteger] | None = None
        # per part: judge, files, the used (file, source) groups, each verdict's place among them
        # and its ledger row
        self._parts: list[tuple[str, list[tuple[str, str]], Any, Any, Any]] = []

    def add(self, plan: PairPlan, rows: Any, coded: tuple[Any, list[tuple[str, str]]]) -> None:
        """The usage of some of ``plan``'s pairs: their ledger ``rows`` (-1: no call) and response
        files."""
        judged = rows >= 0
        if not judged.any():
            return
        if self._source is None:
            self._source, self._sources = dictionary_codes(self.ledger.indexed_column("source"))
        n = len(self._sources)
        files, names = coded
        rows = rows[judged]
        used, place = grouped(files[judged] * n + self._source[rows], len(names) * n)
        if len(self._source) < np.iinfo(np.int32).max:  # a ledger row number fits 32 bits
            rows = rows.astype(np.int32)
        self._parts.append((plan.judge.name, names, used, place.astype(np.int32), rows))

    def frame(self) -> pd.DataFrame:
        """One row per (submission, setting, judge, source) with a verdict, sorted by those four."""
        if not self._parts:
            return _empty()
        sources = self._sources
        sums: list[dict[str, Any]] = [
            {"n_verdicts": np.bincount(place, minlength=len(used))}
            for _, _, used, place, _ in self._parts
        ]
        # one buffer of a value per ledger row (as many as source codes) for every column in
        # turn, filled a shard at a time: not a new array per column
        values = np.empty(len(self._source) if self._source is not None else 0, np.int64)
        for c in _COUNTS:
            at = 0
            for chunk in self.ledger.indexed_column(c):
                values[at : at + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
                at += len(chunk)
            for (_, _, used, place, rows), got in zip(self._parts, sums, strict=True):
                got[c] = np.rint(np.bincount(place, values[rows], len(used))).astype(np.int64)
        del values
        frames = []
        for (judge, names, used, _, _), got in zip(self._parts, sums, strict=True):
            file, src = np.divmod(used, len(sources))
            frames.append(
                pd.DataFrame(
                    {
                        "submission_id": [names[f][0] for f in file.tolist()],
                        "setting": [names[f][1] for f in file.tolist()],
                        "judge": judge,
                        "source": [sources[s] for s in src.tolist()],
                        **got,
                    }
                )
            )
        out = pd.concat(frames, ignore_index=True)[list(USAGE_COLUMNS)]
        return out.sort_values(list(USAGE_COLUMNS[:4]), ignore_index=True)


def usage_frame(plans: list[PairPlan], ledger: Ledger) -> pd.DataFrame:
    """Calls and tokens of the ledger's verdicts of the planned pairs, per (submission, setting,
    judge, source)."""
    index, _ = ledger.key_index()
    sums = UsageSums(ledger)
    for p in plans:  # a pair with no call (-1) counts nowhere
        sums.add(p, np.where(p.empty, -1, p.rows_in(index)), p.file_codes(slice(None)))
    return sums.frame()


def _empty() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype=str if i < 4 else np.int64) for i, c in enumerate(USAGE_COLUMNS)}
    )


def write_usage_frame(frame: pd.DataFrame, out: Path, fingerprint: str = "") -> Path:
    """Write the usage table ``frame`` to ``out`` with the verdict table's ``fingerprint`` in its
    metadata (:func:`scoring.judge.table.table_is_current` reads it); returns ``out``."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    if fingerprint:
        meta[FINGERPRINT] = fingerprint.encode()
    table = table.replace_schema_metadata(meta)
    atomic_write(out, lambda tmp: pq.write_table(table, tmp))
    return out


def write_usage_table(
    plans: list[PairPlan], ledger: Ledger, out: Path, fingerprint: str = ""
) -> Path:
    """Write :func:`usage_frame` to ``out`` (:func:`write_usage_frame`); returns ``out``."""
    return write_usage_frame(usage_frame(plans, ledger), out, fingerprint)
