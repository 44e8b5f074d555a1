"""The verdict table as a dense ``int8`` matrix, a row per (submission, setting, judge) and a
column per expected check (:data:`MISSING`: no verdict), streamed a record batch at a time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scoring.errors import GamutError
from scoring.questions import Setting
from scoring.verdicts import VERDICT_KEY, VERDICT_ORDER

SETTINGS: tuple[Setting, ...] = tuple(Setting)
MISSING = -1
KEY_COLUMNS = (*VERDICT_KEY, "verdict")
#: Rows decoded at a time: large enough that per-batch work is negligible, small enough that the
#: batch's arrays stay under a megabyte (larger ones are mapped afresh, page by page, each batch).
BATCH_ROWS = 1 << 16


class _Decoder:
    """Our code for each row of a string column; ``sink`` for values not in ``lookup``. The
    lookup table is rebuilt only when a batch's dictionary changes."""

    def __init__(self, lookup: dict[str, int], sink: int) -> None:
        self.lookup, self.sink = lookup, sink
        self.dictionary: pa.Array | None = None
        self.lut = np.zeros(0, np.int32)

    def __call__(self, column: pa.Array) -> npt.NDArray[np.int32]:
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        if self.dictionary is None or not column.dictionary.equals(self.dictionary):
            values = column.dictionary.to_pylist()
            self.lut = np.array(
                [self.lookup.get(v, self.sink) for v in values] + [self.sink], np.int32
            )
            self.dictionary = column.dictionary
        indices = column.indices
        if indices.null_count:
            indices = indices.fill_null(len(self.lut) - 1)
        return np.asarray(self.lut[indices.to_numpy()], np.int32)


def check_positions(check_ids: list[list[str]]) -> tuple[dict[str, int], npt.NDArray[np.int32]]:
    """The check-id codes and a dense flat ``(question, check id) -> column`` table of shape
    ``(Q + 1) * (n_ids + 1)`` (a sink row and column); ``-1`` marks a pair not expected."""
    codes = {cid: i for i, cid in enumerate(sorted({c for ids in check_ids for c in ids}))}
    width = len(codes) + 1
    dense = np.full((len(check_ids) + 1) * width, -1, np.int32)
    start = 0
    for q, ids in enumerate(check_ids):
        cols = np.fromiter((codes[c] for c in ids), np.int64, len(ids))
        dense[q * width + cols] = np.arange(start, start + len(ids), dtype=np.int32)
        start += len(ids)
    return codes, dense


def read_verdicts(
    path: Path,
    submission_ids: tuple[str, ...],
    judges: tuple[str, ...],
    question_ids: list[str],
    check_ids: list[list[str]],
) -> tuple[npt.NDArray[np.int8], int]:
    """The dense verdict matrix ``[G, K]`` and the number of rows left out for unknown
    submissions, judges, questions or checks (a stale table); GamutError on an unreadable table,
    an unknown verdict, or two verdicts for one (submission, setting, judge, check)."""
    if not path.is_file():
        raise GamutError(f"no verdict table at {path} (run `gamut judge` first)")
    fix = "(rewrite it with `gamut judge`)"
    n_s, n_set, n_j = len(submission_ids), len(SETTINGS), len(judges)
    n_q = len(question_ids)
    cid_codes, dense = check_positions(check_ids)
    width = len(cid_codes) + 1
    n_checks = sum(len(ids) for ids in check_ids)
    n_groups = n_s * n_set * n_j
    specs: dict[str, tuple[dict[str, int], int]] = {
        "submission_id": ({s: i for i, s in enumerate(submission_ids)}, n_s),
        "setting": ({s.value: i for i, s in enumerate(SETTINGS)}, n_set),
        "judge": ({j: i for i, j in enumerate(judges)}, n_j),
        "question_id": ({q: i for i, q in enumerate(question_ids)}, n_q),
        "check_id": (cid_codes, len(cid_codes)),
        "verdict": ({v.value: i for i, v in enumerate(VERDICT_ORDER)}, -1),
    }
    index_type = np.int64 if n_groups * max(n_checks, 1) >= 2**31 else np.int32
    matrix = np.full(n_groups * n_checks, MISSING, np.int8)
    decoders = {name: _Decoder(*spec) for name, spec in specs.items()}

    def put(batch: pa.RecordBatch) -> int:
        """Write one batch's verdicts into the matrix; the number of rows kept."""
        c = {name: decoders[name](batch.column(name)) for name in KEY_COLUMNS}
        if (c["verdict"] < 0).any():
            used = pc.unique(batch.column("verdict").cast(pa.string())).to_pylist()
            bad = sorted({str(v) for v in used} - {v.value for v in VERDICT_ORDER})
            raise GamutError(
                f"{path}: unknown verdict value(s) {bad} "
                "(allowed: meets, partially_meets, missing, contradicts)"
            )
        k = dense[c["question_id"] * width + c["check_id"]]
        ok = (c["submission_id"] < n_s) & (c["setting"] < n_set) & (c["judge"] < n_j) & (k >= 0)
        g = (c["submission_id"] * n_set + c["setting"]) * n_j + c["judge"]
        flat = g.astype(index_type) * n_checks + k
        matrix[flat[ok]] = c["verdict"][ok]
        return int(ok.sum())

    try:
        missing = [c for c in KEY_COLUMNS if c not in pq.read_schema(path).names]
        if missing:
            raise GamutError(
                f"cannot read the verdict table {path}: no column(s) {', '.join(missing)} {fix}"
            )
        table = pq.ParquetFile(path, read_dictionary=list(KEY_COLUMNS))
        # streamed: only one batch of rows is decoded at a time, beside the matrix
        batches = table.iter_batches(batch_size=BATCH_ROWS, columns=list(KEY_COLUMNS))
        kept = sum(put(batch) for batch in batches)
    except (pa.ArrowInvalid, OSError) as exc:
        raise GamutError(f"cannot read the verdict table {path}: {exc} {fix}") from None
    if int(np.count_nonzero(matrix != MISSING)) != kept:
        raise GamutError(
            f"{path}: some (submission, setting, judge, check) has more than one "
            "verdict row (rewrite the table with `gamut judge`)"
        )
    return matrix.reshape(n_groups, n_checks), table.metadata.num_rows - kept
