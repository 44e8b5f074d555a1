"""Downloadable files: the questions, every score table and every verdict, each with its column
dictionary (:mod:`scoring.tables.columns`); rubric text and rationales only when rubrics are public.

Score tables are small: each is published as Parquet (the results file itself) and CSV. Verdicts
are millions of rows at paper scale, so they are published in Parquet only, twice: one file of
every verdict (row groups by submission, so ``filters=[("submission_id", "==", ...)]`` reads one
model) and one file per submission, derived from ``<results>/verdicts.parquet``, the public flag,
the judges' identities and the questions' domains.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from generator import every_eval
from generator.render import file_id
from generator.tables import ScoreTables
from scoring.errors import GamutError
from scoring.layout import PROVENANCE_KEY, with_provenance
from scoring.questions import Question
from scoring.tables import (
    PROVENANCE_FILE,
    SECONDARY_NOTE,
    VERDICT_KEY_NOTE,
    ResultsLayout,
    arrow_type,
    dictionary,
    judge_ids,
    published_types,
    response_table,
    score_tables,
    submission_slices,
    undocumented,
    verdict_table,
    write_table_csv,
)
from scoring.verdicts import VERDICT_TEXT_COLUMNS

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


def _describe(table: str, columns: list[str]) -> dict[str, str]:
    missing = undocumented(table, columns)
    if missing:
        raise GamutError(f"{table}: undocumented columns {', '.join(missing)}; {_FIX}")
    return dictionary(table, columns)


def _question_frame(questions: list[Question]) -> pd.DataFrame:
    cols = ("question_id", "image_id", "domain", "popularity", "egocentric", "question",
            "text_only_question")  # fmt: skip
    rows = [{c: getattr(q, c) for c in cols} for q in questions]
    df = pd.DataFrame(rows, columns=list(cols))
    df["popularity"] = df["popularity"].map(str)
    df["egocentric"] = df["egocentric"].astype(bool)
    return df


def _with_provenance(table: pa.Table, provenance: dict[str, Any]) -> pa.Table:
    """``table`` carrying the run's provenance as Parquet file metadata (``gamut.provenance``),
    as every results file does."""
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    return with_provenance(table.replace_schema_metadata(meta), provenance)


def _write_parquet(table: pa.Table, name: str, path: Path, provenance: dict[str, Any]) -> None:
    """Write ``table`` in its published types (:func:`published_types`, the Hub copy's schema)
    with the run's provenance."""
    typed = _with_provenance(published_types(name, table), provenance)
    pq.write_table(typed, path, compression="zstd")


def _publish_parquet(
    source: Path | None, df: pd.DataFrame, table: str, path: Path, provenance: dict[str, Any]
) -> None:
    """The results file itself when it carries the provenance and already has the published
    types (as ``gamut score`` writes it), else its table (or ``df``, typed by the dictionary)
    written in the published types with the provenance."""
    if source is None:
        arrays = [pa.array(df[c].tolist(), type=arrow_type(table, c)) for c in df.columns]
        _write_parquet(pa.Table.from_arrays(arrays, names=list(df.columns)), table, path,
                       provenance)  # fmt: skip
        return
    schema = pq.read_schema(source)
    empty = schema.empty_table()  # the types decide: the rows are read only to be rewritten
    if published_types(table, empty) is empty and PROVENANCE_KEY in (schema.metadata or {}):
        shutil.copyfile(source, path)
        return
    _write_parquet(pq.read_table(source), table, path, provenance)


#: What each key of ``provenance.json`` records (the downloads page lists them).
PROVENANCE_KEYS: dict[str, str] = {
    "rubric_version": "the rubric set's digest (the benchmark version every row was scored on)",
    "rubrics_public": "whether rubric and check text are published",
    "judges": "each judge's provider, model, family, prompt version and template digest",
    "primary_judge": "the judge that ranks the leaderboard",
    "scoring": "the scoring parameters: partial credit, contradiction penalty, tier weights, "
    "bootstrap resamples and seed",
    "engine_version": "the version of the scoring engine",
    "generated_at": "when the score tables were computed (UTC)",
    "demo": "true when the results are the synthetic demo's",
    "n_questions": "questions scored",
    "n_checks": "compiled checks",
    "n_submissions": "submissions scored",
    "ignored_verdict_rows": "verdict rows that matched no current check (left out)",
}


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """CSV through Arrow's writer (pandas' float formatting is ten times slower), gzipped
    when the name says so."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata(None)
    if path.suffix != ".gz":
        write_table_csv(table, path)
        return
    sink = pa.BufferOutputStream()
    write_table_csv(table, sink)
    path.write_bytes(gzip.compress(memoryview(sink.getvalue()), compresslevel=3, mtime=0))


def _table_download(
    name: str,
    label: str,
    df: pd.DataFrame,
    out: Path,
    parquet_source: Path | None,
    provenance: dict[str, Any],
) -> Download:
    columns = _describe(name, list(df.columns))
    parquet = out / f"{name}.parquet"
    _publish_parquet(parquet_source, df, name, parquet, provenance)
    large = any(t.large and t.name == name for t in score_tables())  # too large to serve plain
    csv = out / (f"{name}.csv.gz" if large else f"{name}.csv")
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


def write_verdict_files(
    tables: ScoreTables, docs: Path, public: bool, domains: dict[str, str]
) -> None:
    """Write the verdict downloads of the verdict table (:func:`scoring.tables.verdict_table`)
    into ``docs/downloads``: ``verdicts.parquet`` (one row group per submission) and
    ``verdicts/<submission>.parquet``, with the provenance less its time
    (:func:`stable_provenance`). Nothing without a verdict table.

    Raises:
        GamutError: the verdict table is unreadable, or names a judge or question with no entry.
    """
    source, out = tables.verdicts_path, docs / "downloads"
    if source is None:
        return
    try:
        table = verdict_table(source, public, judge_ids(tables.provenance), domains)
    except (OSError, pa.ArrowException) as exc:
        raise GamutError(f"cannot read {source}: {exc}; rewrite it with `gamut judge`") from None
    prov = json.dumps(stable_provenance(tables.provenance), sort_keys=True)
    table = table.replace_schema_metadata({PROVENANCE_KEY: prov.encode()})
    parts = {sid: published_types("verdicts", p) for sid, p in submission_slices(table).items()}
    (out / "verdicts").mkdir(parents=True, exist_ok=True)
    for sid, part in parts.items():
        pq.write_table(part, out / "verdicts" / f"{file_id(sid)}.parquet", **_PARQUET)
    schema = published_types("verdicts", table.slice(0, 0)).schema
    with pq.ParquetWriter(out / "verdicts.parquet", schema, **_PARQUET) as writer:
        for sid in sorted(parts):  # one row group per submission
            writer.write_table(parts[sid], row_group_size=max(1, parts[sid].num_rows))


def _every_eval_download(lb: pd.DataFrame, prov: dict[str, Any], out: Path) -> Download:
    """The leaderboard in Every Eval Ever's format (:mod:`generator.every_eval`)."""
    n = every_eval.write_every_eval(lb, prov, out)
    path = out / every_eval.FILE
    return Download(
        "Every Eval Ever",
        "every_eval_ever",
        n,
        [("JSON Lines", f"downloads/{path.name}", path.stat().st_size)],
        f'[json.loads(line) for line in open("{path.name}")]',
        dict(every_eval.KEYS),
        "One document per submission in the format of Every Eval Ever (its eval.schema.json, "
        f"schema version {every_eval.SCHEMA_VERSION}), one per line.",
    )


def write_downloads(
    tables: ScoreTables,
    docs: Path,
    *,
    public: bool,
    questions: list[Question] | None = None,
) -> dict[str, object]:
    """Write the download files under ``docs/downloads`` (a fresh build folder).

    Args:
        tables: the score tables.
        docs: the build copy of the docs folder.
        public: whether rubric text and rationales may be published.
        questions: the public questions (published with their metadata when given).

    Returns:
        ``{"main": [Download, ...], "verdicts": Download | None, "per_submission":
        {submission_id: {label: path}}, "bytes": total size}``.

    Raises:
        GamutError: a published column has no dictionary entry, or the published verdict files
            are missing or hold text that is held.
    """
    out = docs / "downloads"
    out.mkdir(parents=True, exist_ok=True)
    lb, prov = tables["leaderboard"], tables.provenance
    main = [_leaderboard_download(tables, out), _provenance_download(prov, out)]
    if questions is not None:
        main.append(
            _table_download("questions", "Questions", _question_frame(questions), out, None, prov)
        )
    for name, label in ((t.name, t.label) for t in score_tables() if t.downloads):
        path = ResultsLayout(tables.results).table(name)
        if not path.is_file():
            continue
        df = tables.frames[name] if name in tables.frames else pd.read_parquet(path)
        main.append(_table_download(name, label, df, out, path, prov))
    main.append(_every_eval_download(lb, prov, out))
    listed = None if tables.verdicts_path is None else _verdicts_download(out, public)
    per_sub = {
        sid: {"Verdicts (Parquet)": f"downloads/verdicts/{file_id(sid)}.parquet"}
        for sid in sorted({str(s) for s in lb["submission_id"]})
        if listed is not None and (out / "verdicts" / f"{file_id(sid)}.parquet").is_file()
    }
    return {
        "main": main,
        "verdicts": listed,
        "per_submission": per_sub,
        "bytes": sum(p.stat().st_size for p in out.rglob("*") if p.is_file()),
    }


def _leaderboard_download(tables: ScoreTables, out: Path) -> Download:
    """The leaderboard as CSV, Parquet (in the published types) and a JSON array of records."""
    lb, prov = tables["leaderboard"], tables.provenance
    lb_csv, lb_json = out / "leaderboard.csv", out / "leaderboard.json"
    lb_parquet = out / "leaderboard.parquet"
    _write_csv(lb, lb_csv)
    source = ResultsLayout(tables.results).table("leaderboard")
    _publish_parquet(source if source.is_file() else None, lb, "leaderboard", lb_parquet, prov)
    records = json.loads(lb.to_json(orient="records", date_format="iso"))
    lb_json.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return Download(
        "Leaderboard",
        "leaderboard",
        len(lb),
        [
            ("CSV", "downloads/leaderboard.csv", lb_csv.stat().st_size),
            ("Parquet", "downloads/leaderboard.parquet", lb_parquet.stat().st_size),
            ("JSON", "downloads/leaderboard.json", lb_json.stat().st_size),
        ],
        'pd.read_csv("leaderboard.csv")',
        _describe("leaderboard", list(lb.columns)),
        "One row per submission, setting and judge. The JSON file is an array of "
        "records, one object per row, as pandas' `read_json` reads it; the run's "
        "provenance is in `provenance.json`.",
    )


def _provenance_download(prov: dict[str, Any], out: Path) -> Download:
    prov_file = out / PROVENANCE_FILE
    prov_file.write_text(json.dumps(prov, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return Download(
        "Provenance",
        "provenance",
        1,
        [("JSON", f"downloads/{PROVENANCE_FILE}", prov_file.stat().st_size)],
        f'json.load(open("{PROVENANCE_FILE}"))',
        {k: v for k, v in PROVENANCE_KEYS.items() if k in prov},
        "What produced every file here; each Parquet file also carries it as file "
        "metadata (gamut.provenance; the verdict and response files without generated_at).",
    )


def _verdicts_download(out: Path, public: bool) -> Download:
    """Every verdict in one file and one file per submission, as :func:`write_verdict_files`
    wrote them (the build links the score step's copy)."""
    all_file = out / "verdicts.parquet"
    names = pq.read_schema(all_file).names if all_file.is_file() else []
    if not names or (not public and set(VERDICT_TEXT_COLUMNS) & set(names)):
        raise GamutError(f"{all_file} is missing or holds held text; run `gamut score` again")
    return Download(
        "Verdicts",
        "verdicts",
        pq.read_metadata(out / "verdicts.parquet").num_rows,
        [("Parquet", "downloads/verdicts.parquet", (out / "verdicts.parquet").stat().st_size)],
        'pd.read_parquet("verdicts.parquet", filters=[("submission_id", "==", "ID")])',
        _describe("verdicts", names),
        f"{VERDICT_KEY_NOTE}\n\n{SECONDARY_NOTE}",
    )


#: The responses download, in the docs folder.
RESPONSES = "downloads/responses.parquet"


def stable_provenance(provenance: dict[str, Any]) -> dict[str, Any]:
    """The provenance less when the tables were written: the same for every score of the same
    inputs (the verdict and response files carry it)."""
    return {k: v for k, v in provenance.items() if k != "generated_at"}


def write_responses(
    responses: dict[tuple[str, str], dict[str, str]],
    question_ids: list[str],
    docs: Path,
    provenance: dict[str, Any],
) -> None:
    """Write the responses download into ``docs``: every scored response, with its length."""
    path = docs / RESPONSES
    path.parent.mkdir(parents=True, exist_ok=True)
    table = _with_provenance(response_table(responses, question_ids), provenance)
    pq.write_table(table, path, compression="zstd")


def read_responses_download(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """The responses of a responses download: (submission_id, setting) -> question id -> text.

    Raises:
        GamutError: the file is unreadable.
    """
    try:
        table = pq.read_table(path, columns=["submission_id", "setting", "question_id", "response"])
    except (OSError, pa.ArrowException) as exc:
        raise GamutError(f"cannot read {path}: {exc}; run `gamut score` again") from None
    out: dict[tuple[str, str], dict[str, str]] = {}
    columns = (table.column(i).to_pylist() for i in range(4))
    for sid, setting, qid, text in zip(*columns, strict=True):
        out.setdefault((sid, setting), {})[qid] = text
    return out


def responses_download(docs: Path) -> Download:
    """The entry of the responses download :func:`write_responses` wrote into ``docs``."""
    path, meta = docs / RESPONSES, pq.read_metadata(docs / RESPONSES)
    return Download(
        "Responses",
        "responses",
        meta.num_rows,
        [("Parquet", RESPONSES, path.stat().st_size)],
        'pd.read_parquet("responses.parquet", filters=[("submission_id", "==", "ID")])',
        _describe("responses", meta.schema.names),
        "One row per submission, setting and question: the response the model gave, as "
        "submitted (join on question_id with the questions, and with the verdicts).",
    )


#: Where the build leaves the dataset card for :func:`generator.build.build_site` to place at
#: ``downloads/README.md`` after mkdocs (mkdocs would render a Markdown file as a page; it skips
#: dot folders).
CARD_STAGING = ".card/README.md"


def _configs(downloads: list[Download]) -> tuple[list[dict[str, Any]], list[str]]:
    """The card's ``configs:``, one per table with rows, each naming its Parquet file (so that
    ``datasets`` guesses no split from a file name), and the empty tables left out."""
    configs: list[dict[str, Any]] = []
    empty: list[str] = []
    for d in downloads:
        parquet = next((p for fmt, p, _ in d.files if fmt == "Parquet"), None)
        if parquet is None:
            continue
        if d.rows == 0:
            empty.append(d.name)
            continue
        files = [{"split": "train", "path": parquet.removeprefix("downloads/")}]
        default = {"default": True} if d.name == "leaderboard" else {}
        configs.append({"config_name": d.name, "data_files": files, **default})
    return configs, empty


#: The Hub's ``size_categories`` buckets above ``n<1K`` (``datasets``'
#: ``utils/resources/size_categories.json``), each with its exclusive upper bound.
SIZE_CATEGORIES: tuple[tuple[int, str], ...] = (
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
    (10**10, "1B<n<10B"),
    (10**11, "10B<n<100B"),
    (10**12, "100B<n<1T"),
)


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a dataset of ``rows`` rows (a row count equal
    to a bound is in the bucket above it, as ``datasets`` counts)."""
    for bound, label in SIZE_CATEGORIES:
        if rows < bound:
            return label
    return "n>1T"


def dataset_card(
    downloads: list[Download],
    provenance: dict[str, Any],
    *,
    title: str,
    description: str,
    public: bool,
    repo: str | None = None,
    url: str = "",
) -> str:
    """The dataset card (``README.md``) of the downloads folder, as the site serves it and as
    ``gamut publish hf`` sends it to the Hub dataset ``repo``: a Hugging Face YAML header (one
    ``configs:`` entry per table with rows, licence, language, task and size categories), the
    run's provenance, how to load it, every file with its rows and column dictionary, the
    licence and a citation."""
    configs, empty = _configs(downloads)
    meta = {
        "license": "apache-2.0",
        "pretty_name": title,
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "size_categories": [size_category(max((d.rows for d in downloads), default=0))],
        "tags": ["gamut", "leaderboard", "llm-as-judge", "evaluation"],
        "configs": configs,
    }
    heading = f"# {title}: {'published results' if repo else 'downloads'}"
    lines = ["---", yaml.safe_dump(meta, sort_keys=False).rstrip(), "---", "", heading, "",
             description, "", *_card_provenance(provenance, public),
             *_card_loading(downloads, empty, repo)]  # fmt: skip
    for d in downloads:
        files = ", ".join(f"`{p.removeprefix('downloads/')}` ({fmt})" for fmt, p, _ in d.files)
        lines += [f"### `{d.name}`", "", f"{d.label}: {files}; {d.rows:,} rows.", ""]
        if d.name == "verdicts":
            lines += ["Also one file per submission: `verdicts/<submission_id>.parquet`.", ""]
        lines += [d.note, ""] if d.note else []
        lines += ["| column | meaning |", "| --- | --- |"]
        lines += [f"| `{c}` | {m} |" for c, m in d.columns.items()] + [""]
    if not public:
        lines += ["The meta-rubrics are held: verdicts carry check ids, kinds, tiers and verdicts "
                  "only, never rubric or check text.", ""]  # fmt: skip
    lines += [*_card_licence(provenance, public), *_card_citation(title, repo, provenance)]
    return "\n".join(lines + (["", f"Leaderboard: {url}"] if url else [])) + "\n"


def _card_provenance(provenance: dict[str, Any], public: bool) -> list[str]:
    judges = provenance.get("judges") or {}
    return [
        f"- rubric version: `{provenance.get('rubric_version', 'unknown')}`",
        f"- engine version: `{provenance.get('engine_version', 'unknown')}`",
        f"- generated at: {provenance.get('generated_at', 'unknown')}",
        f"- submissions: {provenance.get('n_submissions', 'unknown')}",
        f"- primary judge: `{provenance.get('primary_judge', 'unknown')}`",
        *(
            f"- judge `{name}`: {j.get('provider')}:{j.get('model')}, prompt "
            f"{j.get('prompt_template') or j.get('prompt_version')}"
            + (" (unrecorded responses: offline matcher)" if j.get("unrecorded") else "")
            for name, j in judges.items()
            if isinstance(j, dict)
        ),
        f"- rubrics public: {'yes' if public else 'no'}",
        "",
        "Every Parquet file carries this provenance as file metadata (`gamut.provenance`; the "
        "verdict files without `generated_at`); `provenance.json` holds it too.",
        "",
    ]


def _card_loading(downloads: list[Download], empty: list[str], repo: str | None) -> list[str]:
    where = repo or "path/to/downloads"
    lines = ["## Loading", "",
             "Each table with rows is a config (the `configs:` header names its Parquet file):",
             "", "```python", "from datasets import load_dataset", "",
             f'leaderboard = load_dataset("{where}", "leaderboard", split="train")',
             f'verdicts = load_dataset("{where}", "verdicts", split="train")', "",
             "import pandas as pd  # or one file",
             f'board = pd.read_parquet("{f"hf://datasets/{repo}/" if repo else ""}'
             'leaderboard.parquet")', "```", "", "| config | file | rows |", "| --- | --- | --- |",
             ]  # fmt: skip
    for d in downloads:
        parquet = next((p for fmt, p, _ in d.files if fmt == "Parquet"), None)
        if parquet is not None and d.name not in empty:
            lines.append(f"| `{d.name}` | `{parquet.removeprefix('downloads/')}` | {d.rows} |")
    lines.append("")
    if empty:
        names = ", ".join(f"`{n}`" for n in empty)
        lines += [f"Empty in this release, so not a config (`datasets` loads no zero-row table; "
                  f"pandas, pyarrow, DuckDB and polars read the file): {names}.", ""]  # fmt: skip
    return [*lines, "## Files", "", VERDICT_KEY_NOTE, "", SECONDARY_NOTE, ""]


def _card_licence(provenance: dict[str, Any], public: bool) -> list[str]:
    judges = (provenance.get("judges") or {}).values()
    models = ", ".join(sorted(f"{j.get('provider')}:{j.get('model')}" for j in judges
                              if isinstance(j, dict)))  # fmt: skip
    return [
        "## Licence",
        "",
        "The project's own files (the score tables, the question metadata, the provenance and "
        "this card) are released under the Apache License 2.0. The verdicts"
        + (" and their rationales" if public else "")
        + " are outputs of third-party judge models"
        + (f" ({models})" if models else "")
        + ", and the responses (config `responses`) came from the submitters' models: such "
        "outputs remain subject to the terms of the providers that produced them, which this "
        "licence does not override. No images are included.",
        "",
    ]


def _card_citation(title: str, repo: str | None, provenance: dict[str, Any]) -> list[str]:
    lines = ["## Citation", "", "```bibtex"]
    if repo:
        year = str(provenance.get("generated_at", ""))[:4] or "unknown"
        key = re.sub(r"[^a-z0-9]+", "_", repo.lower()).strip("_")
        lines += [
            f"@misc{{{key},",
            f"  title        = {{{{{title}}}: published results}},",
            f"  howpublished = {{\\url{{https://huggingface.co/datasets/{repo}}}}},",
            f"  year         = {{{year}}},",
            f"  note         = {{Rubric version {provenance.get('rubric_version', 'unknown')}}}",
            "}",
            "",
        ]
    return [
        *lines,
        "@misc{gamut_benchmark,",
        "  title = {{Two-Level Meta-Rubrics for Evaluating Open-Ended Generation: GAMUT, a "
        "Benchmark for Factual Completeness}}",
        "}",
        "```",
    ]


def downloads_size(site: Path) -> tuple[int, int]:
    """(files, bytes) of a built site's ``downloads/`` folder."""
    files = [p for p in (site / "downloads").rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


__all__ = [
    "CARD_STAGING",
    "Download",
    "dataset_card",
    "downloads_size",
    "read_responses_download",
    "responses_download",
    "size_category",
    "stable_provenance",
    "write_downloads",
    "write_responses",
    "write_verdict_files",
]
