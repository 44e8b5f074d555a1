"""Downloadable files: the questions, every score table and every verdict, each with its column
dictionary (:mod:`scoring.tables.columns`); rubric text and rationales only when rubrics are public.

Score tables are small: each is published as Parquet (the results file itself) and CSV. Verdicts
are millions of rows at paper scale, so they are published in Parquet only, twice: one file of
every verdict (row groups by submission, so ``filters=[("submission_id", "==", ...)]`` reads one
model) and one file per submission. They are a pure function of ``<results>/verdicts.parquet``,
the public flag, the judges' identities and the questions' domains, and are cached under a key of
all four: most builds reuse them unchanged.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from generator.render import file_id
from generator.tables import ScoreTables, SiteError
from scoring.questions import Question
from scoring.storage import make_temp_folder
from scoring.tables import (
    SECONDARY_NOTE,
    VERDICT_KEY_NOTE,
    arrow_type,
    dictionary,
    judge_ids,
    submission_slices,
    undocumented,
    verdict_table,
    write_table_csv,
)

#: Bump when the layout or content of the derived verdict files changes.
FORMAT_VERSION = "2"
#: Score tables published beside the leaderboard, in page order, with their labels.
SCORE_TABLES: tuple[tuple[str, str], ...] = (
    ("question_scores", "Question scores"),
    ("by_domain", "Scores by domain"),
    ("by_popularity", "Scores by popularity bucket"),
    ("by_egocentric", "Scores for egocentric and other photos"),
    ("by_kind", "Verdicts by check kind"),
    ("modality", "Multimodal vs text-only per model"),
    ("modality_summary", "Multimodal vs text-only summary"),
    ("pairwise", "Pairwise model differences"),
    ("judge_scores", "Scores under each judge"),
    ("judge_tau", "Judge ranking agreement (Kendall tau)"),
    ("judge_kappa", "Judge verdict agreement (Cohen's kappa)"),
    ("judge_kappa_by_kind", "Judge verdict agreement by check kind (Cohen's kappa)"),
    ("judge_leniency", "Judge leniency"),
    ("judge_self_preference", "Judge self-preference"),
    ("judge_family_matrix", "Judge self-preference matrix (judge family x model family)"),
    ("rank_sensitivity", "Each model's rank under every judge"),
    ("min_detectable_difference", "Minimum detectable difference per board"),
    ("judge_human", "Judge against the human audit"),
    ("human_human", "Annotators against each other"),
    ("incomplete", "Incomplete submissions"),
)
#: Tables whose CSV is gzipped (one row per question and model: too large to serve plain).
GZIPPED = {"question_scores"}
_FIX = "describe the column in scoring/tables/columns.py (TABLES) so the downloads can document it"


@dataclass(frozen=True)
class Download:
    """One downloadable table: its files (format -> path from the site root, size), how to read
    it, its column dictionary and a note."""

    label: str
    name: str
    rows: int
    files: list[tuple[str, str, int]]
    reader: str
    columns: dict[str, str]
    note: str = ""

    @property
    def path(self) -> str:
        """The first file's path."""
        return self.files[0][1]

    @property
    def size(self) -> int:
        """The first file's size in bytes."""
        return self.files[0][2]


def _describe(table: str, columns: list[str]) -> dict[str, str]:
    missing = undocumented(table, columns)
    if missing:
        raise SiteError(f"{table}: undocumented columns {', '.join(missing)}; {_FIX}")
    return dictionary(table, columns)


def _question_frame(questions: list[Question]) -> pd.DataFrame:
    cols = ("question_id", "image_id", "domain", "popularity", "egocentric", "question",
            "text_only_question")  # fmt: skip
    rows = [{c: getattr(q, c) for c in cols} for q in questions]
    df = pd.DataFrame(rows, columns=list(cols))
    df["popularity"] = df["popularity"].map(str)
    df["egocentric"] = df["egocentric"].astype(bool)
    return df


def _typed_parquet(df: pd.DataFrame, table: str, path: Path) -> None:
    """Write ``df`` with the dictionary's types (so an all-null column is still typed)."""
    arrays = [pa.array(df[c].tolist(), type=arrow_type(table, c)) for c in df.columns]
    pq.write_table(pa.Table.from_arrays(arrays, names=list(df.columns)), path, compression="zstd")


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """CSV through Arrow's writer (pandas' float formatting is ten times slower), gzipped
    when the name says so."""
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    if path.suffix != ".gz":
        write_table_csv(table, path)
        return
    sink = pa.BufferOutputStream()
    write_table_csv(table, sink)
    path.write_bytes(gzip.compress(memoryview(sink.getvalue()), compresslevel=3, mtime=0))


def _table_download(
    name: str, label: str, df: pd.DataFrame, out: Path, parquet_source: Path | None
) -> Download:
    columns = _describe(name, list(df.columns))
    parquet = out / f"{name}.parquet"
    if parquet_source is not None:
        shutil.copyfile(parquet_source, parquet)  # the results file itself, provenance included
    else:
        _typed_parquet(df, name, parquet)
    csv = out / (f"{name}.csv.gz" if name in GZIPPED else f"{name}.csv")
    _write_csv(df, csv)
    files = [
        (fmt, f"downloads/{p.name}", p.stat().st_size)
        for fmt, p in (
            ("CSV" + (", gzip" if csv.suffix == ".gz" else ""), csv),
            ("Parquet", parquet),
        )
    ]
    reader = f'pd.read_csv("{csv.name}")'
    return Download(label, name, len(df), files, reader, columns)


# --- verdicts -------------------------------------------------------------------------------------


_PARQUET = {"compression": "zstd", "write_statistics": ["submission_id"]}


def _write_verdict_files(table: pa.Table, out: Path) -> list[str]:
    """Write ``verdicts.parquet`` and ``verdicts/<submission>.parquet`` into ``out``."""
    (out / "verdicts").mkdir(parents=True, exist_ok=True)
    parts = submission_slices(table)

    def one(item: tuple[str, pa.Table]) -> None:
        sid, part = item
        pq.write_table(part, out / "verdicts" / f"{file_id(sid)}.parquet", **_PARQUET)

    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
        pending = pool.map(one, sorted(parts.items()))
        with pq.ParquetWriter(out / "verdicts.parquet", table.schema, **_PARQUET) as writer:
            for sid in sorted(parts):  # one row group per submission
                writer.write_table(parts[sid], row_group_size=max(1, parts[sid].num_rows))
            if not parts:
                writer.write_table(table)
        list(pending)
    names = [str(c) for c in table.column_names]
    (out / "columns.json").write_text(json.dumps(names), encoding="utf-8")
    return names


def _cache_key(
    source: Path, public: bool, judge_ids: dict[str, str], domains: dict[str, str]
) -> str:
    h = hashlib.sha256(f"{FORMAT_VERSION}|{public}|".encode())
    h.update(json.dumps([judge_ids, domains], sort_keys=True).encode())
    with source.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:24]


def _cached_verdict_files(
    source: Path,
    public: bool,
    judge_ids: dict[str, str],
    domains: dict[str, str],
    cache: Path,
) -> Path:
    """The folder of derived verdict files for ``source``, written on a cache miss."""
    entry = cache / _cache_key(source, public, judge_ids, domains)
    if not (entry / "columns.json").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = make_temp_folder(cache, ".tmp-")
        try:
            _write_verdict_files(verdict_table(source, public, judge_ids, domains), tmp)
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


def _domains(tables: ScoreTables, questions: list[Question] | None) -> dict[str, str]:
    if questions is not None:
        return {q.question_id: q.domain for q in questions}
    path = tables.results / "question_scores.parquet"
    if not path.is_file():
        raise SiteError(f"{path} not found: the verdict downloads need each question's domain")
    qs = pq.read_table(path, columns=["question_id", "domain"]).to_pandas()
    return dict(zip(qs["question_id"].astype(str), qs["domain"].astype(str), strict=True))


def write_downloads(
    tables: ScoreTables,
    docs: Path,
    *,
    public: bool,
    cache: Path,
    questions: list[Question] | None = None,
) -> dict[str, object]:
    """Write the download files under ``docs/downloads`` (a fresh build folder).

    Args:
        tables: the score tables.
        docs: the build copy of the docs folder.
        public: whether rubric text and rationales may be published.
        cache: folder for derived verdict files (reused while their inputs are unchanged).
        questions: the public questions (published with their metadata when given).

    Returns:
        ``{"main": [Download, ...], "verdicts": Download | None, "per_submission":
        {submission_id: {label: path}}, "verdict_columns": [...], "bytes": total size}``.

    Raises:
        SiteError: a published column has no dictionary entry, or the verdict table is unreadable.
    """
    out = docs / "downloads"
    out.mkdir(parents=True, exist_ok=True)
    lb = tables["leaderboard"]
    main: list[Download] = []
    lb_csv, lb_json = out / "leaderboard.csv", out / "leaderboard.json"
    _write_csv(lb, lb_csv)
    records = json.loads(lb.to_json(orient="records", date_format="iso"))
    payload = {"provenance": tables.provenance, "rows": records}
    lb_json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    main.append(
        Download(
            "Leaderboard",
            "leaderboard",
            len(lb),
            [
                ("CSV", "downloads/leaderboard.csv", lb_csv.stat().st_size),
                ("JSON", "downloads/leaderboard.json", lb_json.stat().st_size),
            ],
            'pd.read_csv("leaderboard.csv")',
            _describe("leaderboard", list(lb.columns)),
            "One row per submission, setting and judge; the JSON file also holds the run's "
            "provenance (rubric version, judges, scoring parameters).",
        )
    )
    if questions is not None:
        main.append(
            _table_download("questions", "Questions", _question_frame(questions), out, None)
        )
    for name, label in SCORE_TABLES:
        path = tables.results / f"{name}.parquet"
        if not path.is_file():
            continue
        df = tables.frames[name] if name in tables.frames else pd.read_parquet(path)
        main.append(_table_download(name, label, df, out, path))

    per_sub: dict[str, dict[str, str]] = {}
    columns: list[str] = []
    verdicts: Download | None = None
    if tables.verdicts_path is not None:
        ids = judge_ids(tables.provenance)
        domains = _domains(tables, questions)
        try:
            derived = _cached_verdict_files(tables.verdicts_path, public, ids, domains, cache)
        except (OSError, pa.ArrowException) as exc:
            raise SiteError(
                f"cannot read {tables.verdicts_path}: {exc}; rewrite it with "
                "`gamut judge` (or `gamut run`)"
            ) from None
        columns = list(json.loads((derived / "columns.json").read_text(encoding="utf-8")))
        _link_tree(derived, out)
        rows = pq.read_metadata(out / "verdicts.parquet").num_rows
        verdicts = Download(
            "Verdicts",
            "verdicts",
            rows,
            [("Parquet", "downloads/verdicts.parquet", (out / "verdicts.parquet").stat().st_size)],
            'pd.read_parquet("verdicts.parquet", filters=[("submission_id", "==", "ID")])',
            _describe("verdicts", columns),
            f"{VERDICT_KEY_NOTE}\n\n{SECONDARY_NOTE}",
        )
        sids = {str(s) for s in lb["submission_id"]}
        for sid in sorted(sids):
            if (out / "verdicts" / f"{file_id(sid)}.parquet").is_file():
                per_sub[sid] = {"Verdicts (Parquet)": f"downloads/verdicts/{file_id(sid)}.parquet"}
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {
        "main": main,
        "verdicts": verdicts,
        "per_submission": per_sub,
        "verdict_columns": columns,
        "bytes": total,
    }


def downloads_size(site: Path) -> tuple[int, int]:
    """(files, bytes) of a built site's ``downloads/`` folder."""
    files = [p for p in (site / "downloads").rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


__all__ = [
    "FORMAT_VERSION",
    "SCORE_TABLES",
    "Download",
    "downloads_size",
    "write_downloads",
]
