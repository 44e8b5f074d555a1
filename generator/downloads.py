"""Downloadable files: the leaderboard and every verdict, with rubric text only when public.

Verdict files are a pure function of ``<results>/verdicts.parquet`` and the public flag, so they
are cached under a key of both: at paper scale (millions of rows) writing them takes longer than
building every page, and most builds reuse them unchanged.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from generator.render import file_id
from generator.tables import VERDICT_ID_COLUMNS, VERDICT_TEXT_COLUMNS, ScoreTables, SiteError

#: Bump when the layout or content of the derived verdict files changes.
FORMAT_VERSION = "1"
GZIP_LEVEL = 3

VERDICT_DICTIONARY: dict[str, str] = {
    "submission_id": "the submission (folder name under submissions/)",
    "setting": "multimodal (image + question) or text_only (entity named, no image)",
    "judge": "the judge's name in the configuration (see the judges page)",
    "question_id": "the public question",
    "check_id": "the check within the question's compiled rubric",
    "kind": "fact, member, baseline, coverage, step, sequence, relation_entity, "
    "relation_aspect or insight",
    "tier": "answer_critical, valuable or context",
    "secondary": "true for extra-credit checks (flexible-list members, coverage, optional steps)",
    "verdict": "meets, partially_meets, missing or contradicts",
    "rationale": "the judge's one- or two-sentence reason (public rubrics only)",
    "check_text": "the check's text (public rubrics only)",
}
LEADERBOARD_DICTIONARY: dict[str, str] = {
    "submission_id, setting, judge": "one row per submission, setting and judge",
    "primary": "true for the judge that ranks the leaderboard",
    "status": "complete, or incomplete when some checks have no verdict",
    "gamut, gamut_lo, gamut_hi": "Gamut score (100 x mean question score) and its 95% CI",
    "ac, v, c (+ _lo, _hi)": "tier scores: answer-critical, valuable, context",
    "share_meets ... share_contradicts": "verdict mix over all checks, as shares in [0, 1]",
    "mean_response_chars": "mean response length in characters",
    "rank, rank_lo, rank_hi, tie_group": "rank within setting and judge, bootstrap rank range "
    "and tie group (complete rows only)",
    "model_name ... demo": "submission metadata from submission.yaml",
}


@dataclass(frozen=True)
class Download:
    """One downloadable file: where it is (from the site root), its size and how to read it."""

    label: str
    path: str
    size: int
    reader: str
    columns: dict[str, str]


def _plain(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded (CSV has no dictionaries)."""
    fields = [
        pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))


def _gz_csv(table: pa.Table, header: bool) -> bytes:
    sink = pa.BufferOutputStream()  # native buffer: the CSV writer runs without the GIL
    pacsv.write_csv(_plain(table), sink, pacsv.WriteOptions(include_header=header))
    return gzip.compress(memoryview(sink.getvalue()), compresslevel=GZIP_LEVEL, mtime=0)


def _by_submission(table: pa.Table) -> dict[str, pa.Table]:
    """The table split by submission (one reordering, then zero-copy slices)."""
    col = table.column("submission_id").combine_chunks()
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    codes = np.asarray(col.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    names = [str(v) for v in col.dictionary.to_pylist()]
    order = np.argsort(codes, kind="stable")
    ordered = table.take(pa.array(order))
    sorted_codes = codes[order]
    out: dict[str, pa.Table] = {}
    for code in np.unique(sorted_codes):
        lo, hi = np.searchsorted(sorted_codes, [code, code + 1])
        out[names[int(code)]] = ordered.slice(int(lo), int(hi - lo))
    return out


def _write_verdict_files(source: Path, out: Path, public: bool) -> list[str]:
    """Write every verdict file into ``out``; returns the columns published."""
    names = pq.read_schema(source).names
    keep = [c for c in VERDICT_ID_COLUMNS if c in names]
    if public:
        keep += [c for c in VERDICT_TEXT_COLUMNS if c in names]
    table = pq.read_table(source, columns=keep).replace_schema_metadata(None)
    (out / "verdicts").mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out / "verdicts.parquet", compression="zstd")
    parts = _by_submission(table)
    header = _gz_csv(table.slice(0, 0), header=True)

    def one(item: tuple[str, pa.Table]) -> tuple[str, bytes]:
        sid, part = item
        pq.write_table(part, out / "verdicts" / f"{file_id(sid)}.parquet", compression="zstd")
        body = _gz_csv(part, header=False)
        (out / "verdicts" / f"{file_id(sid)}.csv.gz").write_bytes(header + body)
        return sid, body

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        bodies = dict(pool.map(one, sorted(parts.items())))
    # gzip members concatenate into one valid gzip file: the whole table without recompressing
    with (out / "verdicts.csv.gz").open("wb") as fh:
        fh.write(header)
        for sid in sorted(bodies):
            fh.write(bodies[sid])
    (out / "columns.json").write_text(json.dumps(keep), encoding="utf-8")
    return keep


def _cache_key(source: Path, public: bool) -> str:
    h = hashlib.sha256(f"{FORMAT_VERSION}|{public}|".encode())
    with source.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:24]


def _cached_verdict_files(source: Path, public: bool, cache: Path | None) -> Path:
    """The folder of derived verdict files for ``source``, written on a cache miss."""
    if cache is None:
        tmp = Path(tempfile.mkdtemp(prefix="gamut-verdicts-"))
        _write_verdict_files(source, tmp, public)
        return tmp
    entry = cache / _cache_key(source, public)
    if not (entry / "columns.json").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
        try:
            _write_verdict_files(source, tmp, public)
            for old in cache.iterdir():
                if old != tmp and old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
            os.replace(tmp, entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return entry


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link (or copy, across filesystems) every file of ``src`` into ``dst``."""
    for path in src.rglob("*"):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        if path.name == "columns.json":
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


def write_downloads(
    tables: ScoreTables, docs: Path, *, public: bool, cache: Path | None = None
) -> dict[str, object]:
    """Write the download files under ``docs/downloads`` (a fresh build folder).

    Args:
        tables: the score tables.
        docs: the build copy of the docs folder.
        public: whether rubric text and rationales may be published.
        cache: folder for derived verdict files (reused while the verdict table is unchanged).

    Returns:
        ``{"main": [Download, ...], "per_submission": {submission_id: {label: path}}}``.
    """
    out = docs / "downloads"
    out.mkdir(parents=True, exist_ok=True)
    lb = tables["leaderboard"]
    lb.to_csv(out / "leaderboard.csv", index=False)
    records = json.loads(lb.to_json(orient="records", date_format="iso"))
    payload = {"provenance": tables.provenance, "rows": records}
    (out / "leaderboard.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    main: list[Download] = []
    for name, fmt in (("leaderboard.csv", "csv"), ("leaderboard.json", "json")):
        reader = (
            "pd.read_csv(path)"
            if fmt == "csv"
            else "pd.json_normalize(json.load(open(path))['rows'])"
        )
        size = (out / name).stat().st_size
        main.append(Download(f"Leaderboard ({fmt.upper()})", f"downloads/{name}", size, reader,
                             dict(LEADERBOARD_DICTIONARY)))  # fmt: skip
    per_sub: dict[str, dict[str, str]] = {}
    columns: list[str] = []
    if tables.verdicts_path is not None:
        try:
            derived = _cached_verdict_files(tables.verdicts_path, public, cache)
        except (OSError, pa.ArrowException) as exc:
            raise SiteError(
                f"cannot read {tables.verdicts_path}: {exc}; rewrite it with "
                "`gamut judge` (or `gamut run`)"
            ) from None
        try:
            columns = list(json.loads((derived / "columns.json").read_text(encoding="utf-8")))
            _link_tree(derived, out)
        finally:
            if cache is None:
                shutil.rmtree(derived, ignore_errors=True)
        cols = {c: VERDICT_DICTIONARY.get(c, "") for c in columns}
        for name, label, reader in (
            ("verdicts.parquet", "All verdicts (Parquet)", "pd.read_parquet(path)"),
            ("verdicts.csv.gz", "All verdicts (CSV, gzip)", "pd.read_csv(path)"),
        ):
            size = (out / name).stat().st_size
            main.append(Download(label, f"downloads/{name}", size, reader, cols))
        sids = {str(s) for s in tables["leaderboard"]["submission_id"]}
        for sid in sorted(sids):
            if (out / "verdicts" / f"{file_id(sid)}.parquet").is_file():
                per_sub[sid] = {
                    "Verdicts (Parquet)": f"downloads/verdicts/{file_id(sid)}.parquet",
                    "Verdicts (CSV, gzip)": f"downloads/verdicts/{file_id(sid)}.csv.gz",
                }
    return {"main": main, "per_submission": per_sub, "verdict_columns": columns}


__all__ = [
    "FORMAT_VERSION",
    "LEADERBOARD_DICTIONARY",
    "VERDICT_DICTIONARY",
    "Download",
    "write_downloads",
]
