"""Publishing results to a Hugging Face Hub dataset.

Published results go to a dataset as one commit built by :func:`build_publish_operations` (pure:
reads files, touches no network) and sent by :func:`publish_results`; the references, endpoint and
token are :mod:`gamut.hub`'s.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from gamut.hub import REPO_ID, TOKEN_ENV, HubError, hub_api, hub_token
from scoring.questions import Setting
from scoring.tables import (
    PROVENANCE_FILE,
    SECONDARY_NOTE,
    TABLES,
    VERDICT_KEY_NOTE,
    arrow_type,
    dictionary,
    judge_ids,
    published_types,
    response_table,
    submission_slices,
    undocumented,
    verdict_table,
)
from scoring.verdicts import USAGE_TABLE, VERDICT_TABLE, VERDICT_TEXT_COLUMNS

if TYPE_CHECKING:
    from gamut.project import Project


@dataclass(frozen=True)
class PublishFile:
    """One file of the published dataset: its path in the repo and its bytes."""

    path_in_repo: str
    data: bytes


def _documented(name: str, table: pa.Table) -> pa.Table:
    """``table`` with every column documented, in its published types (:func:`published_types`).

    Raises:
        HubError: a column has no entry in :data:`scoring.tables.columns.TABLES`.
    """
    missing = undocumented(name, table.column_names)
    if missing:
        raise HubError(
            f"{name}: undocumented columns {', '.join(missing)}; describe them in "
            "scoring/tables/columns.py (TABLES) so the dataset card can document them"
        )
    return published_types(name, table)


def _parquet_bytes(table: pa.Table, provenance: dict[str, Any] | None) -> bytes:
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        meta[b"gamut.provenance"] = json.dumps(provenance, sort_keys=True).encode()
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buf, compression="zstd")
    return buf.getvalue()


def _frame_table(df: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)


def _safe_name(submission_id: str) -> str:
    if not re.fullmatch(r"[a-z0-9._-]{3,64}", submission_id) or submission_id.strip(".") == "":
        raise HubError(f"submission id {submission_id!r} cannot name a published file")
    return submission_id


@dataclass(frozen=True)
class PublishedTable:
    """One config of the dataset: its files, rows and columns (name, Arrow type)."""

    name: str
    path: str
    rows: int
    columns: list[tuple[str, str]]


def _question_table(project: Project) -> pa.Table:
    """The public questions with their metadata and both forms of the question."""
    questions = project.questions
    columns = {}
    for c in TABLES["questions"]:
        values = [getattr(q, c) for q in questions]
        if c == "popularity":
            values = [str(v) for v in values]
        columns[c] = pa.array(values, arrow_type("questions", c))
    return pa.table(columns)


def _response_table(
    project: Project, submission_ids: list[str], question_ids: list[str]
) -> pa.Table:
    """The scored submissions' responses (the table the site's ``responses.parquet`` holds).

    Raises:
        HubError: a response file of a scored submission no longer reads clean.
    """
    from scoring.submissions import ERROR, Limits, read_response_file

    texts: dict[tuple[str, str], dict[str, str]] = {}
    for sid in submission_ids:
        for setting in (s.value for s in Setting):
            path = project.submissions.responses(sid, setting)
            if not path.is_file():
                continue
            read = read_response_file(path, str(path), setting, question_ids, Limits())
            bad = [str(p) for p in read.problems if p.severity == ERROR]
            if bad:
                raise HubError(
                    f"{path} does not read clean ({bad[0]}); fix it and run `gamut run` first"
                )
            texts[(sid, setting)] = {q: r.text for q, r in read.responses.items()}
    return response_table(texts, question_ids)


def publish_files(project: Project, repo_id: str | None = None) -> list[PublishFile]:
    """Every file of the published dataset, built from ``results/`` (no network).

    Layout: ``data/<table>.parquet`` for the questions, the scored submissions' responses
    (``responses``, the table of the site's ``responses.parquet``) and each non-empty score table,
    ``data/verdicts/<submission>.parquet`` for each submission's verdicts (the columns of ``gamut
    export verdicts`` plus ``domain``), ``provenance.json`` and a ``README.md`` dataset card whose
    YAML ``configs:`` header lets ``datasets.load_dataset(repo, "<table>")`` read each table.
    Every column is documented on the card; unless rubrics are public, verdicts keep only the
    id/kind/tier/verdict columns. Empty tables are left out (``datasets`` cannot load a file with
    no rows) and named on the card.

    Args:
        project: the deployment.
        repo_id: the dataset the files are for (the card's loading snippet names it); default
            ``publish.hf_dataset``.

    Raises:
        HubError: no repo id, the results folder has no leaderboard or no verdict table yet, or
            a column is undocumented.
    """
    cfg = project.cfg
    repo = repo_id or cfg.publish.hf_dataset
    if not repo or not REPO_ID.match(repo):
        raise HubError(
            f"the dataset {repo!r} must look like ORG/NAME: pass --repo or set publish.hf_dataset"
        )
    layout = project.results_layout
    results = layout.root
    public = project.rubrics_public
    lb = layout.table("leaderboard")
    verdict_file = layout.verdicts
    for need, cmd in ((lb, "gamut score"), (verdict_file, "gamut judge")):
        if not need.is_file():
            raise HubError(f"{need} does not exist; run `{cmd}` (or `gamut run`) first")
    prov_file = layout.provenance
    provenance: dict[str, Any] | None = (
        json.loads(prov_file.read_text(encoding="utf-8")) if prov_file.is_file() else None
    )
    files: list[PublishFile] = []
    tables: dict[str, PublishedTable] = {}
    empty: list[str] = []

    def add(name: str, path: str, table: pa.Table) -> None:
        table = _documented(name, table)
        files.append(PublishFile(path, _parquet_bytes(table, provenance)))
        cols = [(f.name, str(f.type)) for f in table.schema]
        tables[name] = PublishedTable(name, path, table.num_rows, cols)

    questions = _question_table(project)
    add("questions", "data/questions.parquet", questions)
    scored = sorted(
        {str(s) for s in pd.read_parquet(lb, columns=["submission_id"])["submission_id"]}
    )
    responses = _response_table(project, scored, questions.column("question_id").to_pylist())
    if responses.num_rows:
        add("responses", "data/responses.parquet", responses)
    else:
        empty.append("responses")
    for f in sorted(results.glob("*.parquet")):
        if f.name in (VERDICT_TABLE, USAGE_TABLE):  # inputs of the score tables, not tables
            continue
        df = pd.read_parquet(f)
        if not public:
            df = df.drop(columns=[c for c in VERDICT_TEXT_COLUMNS if c in df.columns])
        if df.empty:
            empty.append(f.stem)
            continue
        add(f.stem, f"data/{f.stem}.parquet", _frame_table(df))
    domains = dict(
        zip(questions.column("question_id").to_pylist(),
            questions.column("domain").to_pylist(), strict=True)
    )  # fmt: skip
    verdicts = verdict_table(verdict_file, public, judge_ids(provenance or {}), domains)
    parts = submission_slices(verdicts)
    for sid in sorted(parts):
        add("verdicts", f"data/verdicts/{_safe_name(sid)}.parquet", parts[sid])
    if parts:
        first = tables["verdicts"]
        tables["verdicts"] = PublishedTable(
            "verdicts", "data/verdicts/*.parquet", verdicts.num_rows, first.columns
        )
    if provenance is not None:
        files.append(
            PublishFile(
                PROVENANCE_FILE,
                (json.dumps(provenance, indent=2, sort_keys=True) + "\n").encode(),
            )
        )
    card = dataset_card(project, repo, list(tables.values()), sorted(parts), provenance, empty)
    files.append(PublishFile("README.md", card.encode("utf-8")))
    return files


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


def _citation(project: Project, repo: str, provenance: dict[str, Any]) -> str:
    cfg = project.cfg
    year = str(provenance.get("generated_at", ""))[:4] or "unknown"
    key = re.sub(r"[^a-z0-9]+", "_", repo.lower()).strip("_")
    return "\n".join(
        [
            "```bibtex",
            f"@misc{{{key},",
            f"  title        = {{{{{cfg.site.title}}}: published results}},",
            f"  howpublished = {{\\url{{https://huggingface.co/datasets/{repo}}}}},",
            f"  year         = {{{year}}},",
            f"  note         = {{Rubric version {provenance.get('rubric_version', 'unknown')}}}",
            "}",
            "",
            "@misc{gamut_benchmark,",
            "  title = {{Two-Level Meta-Rubrics for Evaluating Open-Ended Generation: GAMUT, a "
            "Benchmark for Factual Completeness}}",
            "}",
            "```",
        ]
    )


def dataset_card(
    project: Project,
    repo: str,
    tables: list[PublishedTable],
    submissions: list[str],
    provenance: dict[str, Any] | None,
    empty: list[str] | None = None,
) -> str:
    """The dataset card: a YAML header (one ``configs:`` entry per table, licence, language,
    task and size categories), then how to load it, every column, the licence and a citation."""
    cfg = project.cfg
    by_name = {t.name: t for t in tables}
    first = ["leaderboard", "verdicts", "responses", "questions"]
    order = [n for n in first if n in by_name] + sorted(n for n in by_name if n not in first)
    configs = [
        {
            "config_name": name,
            "data_files": [{"split": "train", "path": by_name[name].path}],
            **({"default": True} if name == "leaderboard" else {}),
        }
        for name in order
    ]
    largest = max((t.rows for t in tables), default=0)
    header = {
        "license": "apache-2.0",
        "pretty_name": cfg.site.title,
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "size_categories": [size_category(largest)],
        "tags": ["gamut", "leaderboard", "llm-as-judge", "evaluation"],
        "configs": configs,
    }
    prov = provenance or {}
    judges = prov.get("judges") or {}
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False).rstrip(),
        "---",
        "",
        f"# {cfg.site.title}: published results",
        "",
        cfg.site.description,
        "",
        f"- submissions: {len(submissions)}",
        f"- rubric version: `{prov.get('rubric_version', 'unknown')}`",
        f"- primary judge: `{prov.get('primary_judge', cfg.primary_judge)}`",
        f"- rubrics public: {'yes' if cfg.benchmark.rubrics_public else 'no'}",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'leaderboard = load_dataset("{repo}", "leaderboard", split="train")',
        f'verdicts = load_dataset("{repo}", "verdicts", split="train")',
        "",
        "import pandas as pd  # or one file straight from the Hub",
        f'df = pd.read_parquet("hf://datasets/{repo}/data/leaderboard.parquet")',
        "```",
        "",
        "One submission's verdicts are in `data/verdicts/<submission_id>.parquet`.",
        "",
        "| config | file(s) | rows |",
        "| --- | --- | --- |",
        *(f"| `{n}` | `{by_name[n].path}` | {by_name[n].rows} |" for n in order),
        "",
    ]
    if empty:
        lines += [
            "Empty in this release, so not published (a config cannot hold zero rows): "
            + ", ".join(f"`{n}`" for n in empty)
            + ".",
            "",
        ]
    lines += [
        "## Columns",
        "",
        VERDICT_KEY_NOTE,
        "",
        SECONDARY_NOTE,
        "",
    ]
    for n in order:
        meanings = dictionary(n, [c for c, _ in by_name[n].columns])
        lines += [f"### `{n}`", "", "| column | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{c}` | {t} | {meanings[c]} |" for c, t in by_name[n].columns]
        lines.append("")
    if not cfg.benchmark.rubrics_public:
        lines += [
            "The meta-rubrics are held: verdicts carry check ids, kinds, tiers and "
            "verdicts only, never rubric or check text.",
            "",
        ]
    models = ", ".join(
        sorted(
            f"{j.get('provider')}:{j.get('model')}" for j in judges.values() if isinstance(j, dict)
        )
    )
    lines += [
        "## Licence",
        "",
        "The project's own files (the score tables, the question metadata, the provenance and "
        "this card) are released under the Apache License 2.0. The verdicts"
        + (" and their rationales" if cfg.benchmark.rubrics_public else "")
        + " are outputs of third-party judge models"
        + (f" ({models})" if models else "")
        + ", and the responses (config `responses`) came from the submitters' models: such "
        "outputs remain subject to the terms of the providers that produced them, which this "
        "licence does not override. No images are included.",
        "",
        "## Citation",
        "",
        _citation(project, repo, prov),
    ]
    if cfg.site.url:
        lines += ["", f"Leaderboard: {cfg.site.url}"]
    return "\n".join(lines) + "\n"


def build_publish_operations(files: list[PublishFile], existing: list[str]) -> list[Any]:
    """The commit operations: add every file; delete stale files under ``data/`` no longer built.

    Args:
        files: the files to publish (from :func:`publish_files`).
        existing: paths already in the repo (empty for a new dataset).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    ops: list[Any] = [
        CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=f.data) for f in files
    ]
    built = {f.path_in_repo for f in files}
    ops += [
        CommitOperationDelete(path_in_repo=p)
        for p in sorted(existing)
        if p.startswith("data/") and p not in built
    ]
    return ops


def publish_results(
    project: Project, repo_id: str, *, token_env: str = TOKEN_ENV, private: bool = False
) -> str:
    """Upload the results to the dataset ``repo_id`` as one commit; return the commit URL.

    Raises:
        HubError: bad repo id, no token, or the Hub refused the commit.
    """
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    if not REPO_ID.match(repo_id):
        raise HubError(f"--repo {repo_id!r} must look like ORG/NAME")
    token = hub_token(token_env)
    if token is None:
        raise HubError(f"no Hub token: set {token_env} to a token with write access to {repo_id}")
    files = publish_files(project, repo_id)
    api = hub_api(token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        try:
            existing = api.list_repo_files(repo_id, repo_type="dataset")
        except RepositoryNotFoundError:
            existing = []
        info = api.create_commit(
            repo_id,
            build_publish_operations(files, existing),
            commit_message=f"Publish GAMUT results ({len(files)} files)",
            repo_type="dataset",
        )
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise HubError(
            f"the Hub refused the upload to {repo_id} (HTTP {status}); check that "
            f"{token_env} has write access"
        ) from None
    return str(info.commit_url)
