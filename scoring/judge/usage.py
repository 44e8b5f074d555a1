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

    Summed by numpy over each plan's pairs, grouped by one integer per (submission, setting,
    source) in the order of their names (a pandas group-by over the pairs took seconds at
    paper scale): the rows of each judge sorted by submission, setting and source."""
    index, stored = ledger.key_index(columns=["source", *_COUNTS[1:]])
    frames = []
    for p in plans:
        if not len(index) or not len(p):
            continue
        row = index.find(p.keys)
        sel = np.flatnonzero(~p.empty & (row >= 0))
        if not sel.size:
            continue
        rows = pa.array(row[sel])
        source = pc.dictionary_encode(stored["source"].take(rows)).combine_chunks()
        sources = source.dictionary.to_pylist()
        rank = np.argsort(np.argsort(np.array(sources, dtype=object), kind="stable"))
        codes = p.id_codes()
        sub_codes, subs = codes["submission_id"]
        set_codes, sets = codes["setting"]
        group = sub_codes[sel].astype(np.int64) * len(sets) + set_codes[sel]
        group = group * len(sources) + rank[source.indices.to_numpy()]
        order = np.argsort(group, kind="stable")
        ordered = group[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        keys = ordered[starts]
        by_name = np.array(sorted(sources), dtype=object)
        out: dict[str, object] = {
            "submission_id": np.array(subs, dtype=object)[keys // (len(sets) * len(sources))],
            "setting": np.array(sets, dtype=object)[keys // len(sources) % len(sets)],
            "judge": p.judge.name,
            "source": by_name[keys % len(sources)],
            "n_verdicts": np.diff(np.r_[starts, len(ordered)]).astype(np.int64),
        }
        for c in ("calls", "tokens_in", "tokens_cached", "tokens_out"):
            values = stored[c].take(rows).to_numpy().astype(np.int64)
            out[c] = np.add.reduceat(values[order], starts)
        frames.append(pd.DataFrame(out, columns=list(USAGE_COLUMNS)))
    if not frames:
        return pd.DataFrame(
            {c: pd.Series(dtype=str if i < 4 else np.int64) for i, c in enumerate(USAGE_COLUMNS)}
        )
    return pd.concat(frames, ignore_index=True)[list(USAGE_COLUMNS)]


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
