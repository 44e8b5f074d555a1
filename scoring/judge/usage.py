"""What judging the verdict table used: calls and tokens per (submission, setting, judge, source).

Written from the ledger beside the verdict table (``<results>/judge_usage.parquet``), with the
same fingerprint, by the step that writes the verdict table; the score tables price it
(:mod:`scoring.tables.cost`). The counts are those recorded with each verdict of the current
pairs: a verdict reached again through the cache (the same response and check) counts in every
row that uses it, and a failed call, which has no verdict, counts in none. A verdict replayed
from a file, or given by the demo's offline matcher, was obtained by no call: its source is
``replay`` and it records no tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scoring.judge.pairs import PairPlan
from scoring.judge.table import FINGERPRINT
from scoring.ledger import Ledger
from scoring.storage import atomic_write
from scoring.verdicts import USAGE_TABLE

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
_COUNTS = USAGE_COLUMNS[4:]


def usage_path(verdict_table: Path) -> Path:
    """Where the usage table of the verdict table at ``verdict_table`` is."""
    return verdict_table.with_name(USAGE_TABLE)


def usage_frame(plans: list[PairPlan], ledger: Ledger) -> pd.DataFrame:
    """Calls and tokens of the ledger's verdicts of the planned pairs, summed per (submission,
    setting, judge, source). Pairs of empty responses (no call) and pairs without a verdict
    have no part in it.

    Columnar: the ledger's columns are read once, and each judge's pairs are summed by
    ``bincount`` over (response file, source) codes (at paper scale, 5.3 million verdicts).
    """
    index, stored = ledger.key_index(columns=["source", *_COUNTS[1:]])
    if not len(index) or not stored.num_rows:
        return _empty()
    encoded = pc.dictionary_encode(stored["source"]).combine_chunks()
    source_code = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    sources = [str(x) for x in encoded.dictionary.to_pylist()]
    # each judge's groups first, then one count column at a time over every judge: one column
    # of the ledger's rows as an array at once (an Arrow take from the ledger's chunks would
    # join them into one array for every judge and column)
    groups: list[tuple[PairPlan, Any, Any, int, list[tuple[str, str]]]] = []
    for p in plans:
        if not len(p):
            continue
        row = index.find(p.keys)
        sel = np.flatnonzero(~p.empty & (row >= 0))
        if not sel.size:
            continue
        rows = row[sel]
        # each unit's response file (submission, setting), numbered in order of first use
        files = [(u.submission_id, u.setting.value) for u in p.units]
        file_ids = {f: i for i, f in enumerate(dict.fromkeys(files))}
        file_of_unit = np.array([file_ids[f] for f in files], np.int64)
        n_groups = len(file_ids) * len(sources)
        group = file_of_unit[p.unit[sel]] * len(sources) + source_code[rows]
        groups.append((p, group, rows, n_groups, list(file_ids)))
    sums: list[dict[str, Any]] = [
        {"n_verdicts": np.bincount(group, minlength=n)} for _, group, _, n, _ in groups
    ]
    for c in _COUNTS[1:]:
        values = np.asarray(stored[c].to_numpy(), np.int64)
        for (_, group, rows, n, _), got in zip(groups, sums, strict=True):
            got[c] = np.bincount(group, weights=values[rows], minlength=n)
        del values
    frames = []
    for (p, _, _, _, names), got in zip(groups, sums, strict=True):
        used = np.flatnonzero(got["n_verdicts"])
        frames.append(
            pd.DataFrame(
                {
                    "submission_id": [names[g // len(sources)][0] for g in used],
                    "setting": [names[g // len(sources)][1] for g in used],
                    "judge": p.judge.name,
                    "source": [sources[g % len(sources)] for g in used],
                    **{c: np.rint(v[used]).astype(np.int64) for c, v in got.items()},
                }
            )
        )
    if not frames:
        return _empty()
    out = pd.concat(frames, ignore_index=True)[list(USAGE_COLUMNS)]
    return out.sort_values(list(USAGE_COLUMNS[:4]), ignore_index=True)


def _empty() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype=str if i < 4 else np.int64) for i, c in enumerate(USAGE_COLUMNS)}
    )


def write_usage_table(
    plans: list[PairPlan], ledger: Ledger, out: Path, fingerprint: str = ""
) -> Path:
    """Write :func:`usage_frame` to ``out`` with the verdict table's ``fingerprint`` in its
    metadata (:func:`scoring.judge.table.table_is_current` reads it); returns ``out``."""
    table = pa.Table.from_pandas(usage_frame(plans, ledger), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    if fingerprint:
        meta[FINGERPRINT] = fingerprint.encode()
    table = table.replace_schema_metadata(meta)
    atomic_write(out, lambda tmp: pq.write_table(table, tmp))
    return out


__all__ = ["USAGE_COLUMNS", "USAGE_TABLE", "usage_frame", "usage_path", "write_usage_table"]
