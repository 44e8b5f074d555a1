"""The Hugging Face Hub: held rubrics in, published results out.

Held rubrics live in a private dataset named in the config as
``rubrics = "hf://datasets/ORG/NAME@<40-hex commit sha>[/folder]"``; :func:`resolve_rubrics_path`
fetches only the rubric files at that exact commit into ``cfg.store.private`` and returns the local
folder. Published results go to a dataset as one commit built by :func:`build_publish_operations`
(pure: reads files, touches no network) and sent by :func:`publish_results`.

The endpoint and token are read from the environment at call time (``GAMUT_HF_ENDPOINT``, then
``HF_ENDPOINT``; ``HF_TOKEN``) and passed to ``huggingface_hub`` explicitly, because the library
reads ``HF_ENDPOINT`` only once, at import.
"""

from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from gamut.config import GamutConfig
from scoring.errors import GamutError
from scoring.tables.write import PROVENANCE_FILE
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_TABLE

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = ("GAMUT_HF_ENDPOINT", "HF_ENDPOINT")
TOKEN_ENV = "HF_TOKEN"
RUBRIC_PATTERNS = ("*.json", "*.jsonl")

_HF_URI = re.compile(
    r"^hf://datasets/(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)"
    r"@(?P<rev>[^/\s]+)(?:/(?P<sub>[^\s]*))?$"
)
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
#: Columns that may carry rubric or judge text; published only when rubrics are public.
TEXT_COLUMNS = ("rationale", "check_text")


class HubError(GamutError):
    """The Hub could not be reached, refused access, or the reference is malformed."""


@dataclass(frozen=True)
class HubRef:
    """A parsed ``hf://datasets/ORG/NAME@REVISION[/folder]`` reference."""

    repo_id: str
    revision: str
    subfolder: str = ""

    @property
    def allow_patterns(self) -> list[str]:
        """Glob patterns that match the rubric files only (inside the subfolder, if any)."""
        prefix = f"{self.subfolder}/" if self.subfolder else ""
        return [prefix + p for p in RUBRIC_PATTERNS]


def is_hub_uri(value: str) -> bool:
    """True when a config value names a Hub location rather than a local path."""
    return value.startswith("hf://")


def parse_hub_uri(uri: str) -> HubRef:
    """Parse a held-rubrics reference; the revision must be a full commit sha.

    Raises:
        HubError: the reference is malformed or not pinned to a commit.
    """
    m = _HF_URI.match(uri.strip())
    if m is None:
        raise HubError(
            f"benchmark.rubrics = {uri!r} is not a Hub reference; "
            "write it as hf://datasets/ORG/NAME@<40-hex commit sha>[/folder]"
        )
    rev = m["rev"]
    if not _SHA.match(rev):
        raise HubError(
            f"benchmark.rubrics revision {rev!r} is not a full commit sha; pin the held rubrics to "
            "one commit (40 lowercase hex digits) so every score names the rubrics it used"
        )
    sub = (m["sub"] or "").strip("/")
    if any(part in {"", ".", ".."} for part in sub.split("/")) and sub:
        raise HubError(f"benchmark.rubrics folder {sub!r} must be a plain relative path")
    return HubRef(repo_id=m["repo"], revision=rev, subfolder=sub)


def hub_endpoint() -> str:
    """The Hub endpoint, read from the environment now (not at import)."""
    for name in ENDPOINT_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_ENDPOINT


def hub_token(env: str = TOKEN_ENV) -> str | None:
    """The Hub token from the environment variable ``env``, or None when unset."""
    value = os.environ.get(env, "").strip()
    return value or None


def private_cache(cfg: GamutConfig) -> Path:
    """The folder for held rubrics, checked to lie outside the results and the site."""
    private = cfg.path(cfg.store.private).resolve()
    for name, other in (("store.results", cfg.store.results), ("site.out", cfg.site.out)):
        public = cfg.path(other).resolve()
        if private == public or public in private.parents:
            raise HubError(
                f"store.private ({private}) lies inside {name} ({public}); held rubrics must not "
                "be published: point store.private somewhere else, e.g. .gamut/private"
            )
    return private


def resolve_rubrics_path(cfg: GamutConfig) -> Path:
    """The local file or folder holding the rubrics named by ``benchmark.rubrics``.

    A local path is resolved against the config file. A Hub reference is downloaded (rubric files
    only, at the pinned commit, token from ``HF_TOKEN``) into ``store.private`` and the local
    snapshot folder is returned; a second call at the same commit uses the cache.

    Raises:
        HubError: malformed reference, missing or refused token, unknown repo or revision, or an
            unreachable Hub with nothing cached.
    """
    value = cfg.benchmark.rubrics
    if not is_hub_uri(value):
        return cfg.path(Path(value))
    ref = parse_hub_uri(value)
    cache = private_cache(cfg) / "hub"
    snapshot = _snapshot(ref, cache)
    return snapshot / ref.subfolder if ref.subfolder else snapshot


def _snapshot(ref: HubRef, cache: Path) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    endpoint = hub_endpoint()
    token = hub_token()
    where = f"{ref.repo_id}@{ref.revision[:12]} on {endpoint}"
    try:
        folder = snapshot_download(
            ref.repo_id,
            repo_type="dataset",
            revision=ref.revision,
            allow_patterns=ref.allow_patterns,
            cache_dir=cache,
            token=token if token else False,
            endpoint=endpoint,
        )
    except RevisionNotFoundError:
        raise HubError(f"held rubrics: no revision {where}; check the commit sha") from None
    except (RepositoryNotFoundError, GatedRepoError):
        fix = "check the name" if token else f"set {TOKEN_ENV} to a token with read access"
        raise HubError(f"held rubrics: {where} not found or not accessible ({fix})") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise HubError(
            f"held rubrics: the Hub answered HTTP {status} for {where}; "
            f"check that {TOKEN_ENV} holds a valid read token"
        ) from None
    except (LocalEntryNotFoundError, OSError) as exc:
        raise HubError(
            f"held rubrics: cannot download {where} and nothing is cached ({type(exc).__name__}); "
            "check the network and GAMUT_HF_ENDPOINT"
        ) from None
    path = Path(folder)
    if not any(path.rglob("*.json*")):
        raise HubError(
            f"held rubrics: {where} holds no .json/.jsonl files under "
            f"{ref.subfolder or 'its root'}; check the folder in benchmark.rubrics"
        )
    return path


# --- publishing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishFile:
    """One file of the published dataset: its path in the repo and its bytes."""

    path_in_repo: str
    data: bytes


def _plain_strings(table: pa.Table) -> pa.Table:
    """Categorical and large-string columns become plain ``string`` columns.

    Every file then has the same simple types whatever pandas produced; ``datasets`` reads all the
    files of one config as one table.
    """
    for i, field in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_dictionary(field.type):
            col = pa.chunked_array([c.dictionary_decode() for c in col.chunks],
                                   type=field.type.value_type)  # fmt: skip
        if pa.types.is_large_string(col.type):
            col = col.cast(pa.string())
        if col is not table.column(i):
            table = table.set_column(i, pa.field(field.name, col.type), col)
    return table


def _parquet_bytes(df: pd.DataFrame, provenance: dict[str, Any] | None) -> bytes:
    table = _plain_strings(pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False))
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        meta[b"gamut.provenance"] = json.dumps(provenance, sort_keys=True).encode()
    table = table.replace_schema_metadata(meta)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _safe_name(submission_id: str) -> str:
    if not re.fullmatch(r"[a-z0-9._-]{3,64}", submission_id) or submission_id.strip(".") == "":
        raise HubError(f"submission id {submission_id!r} cannot name a published file")
    return submission_id


def publish_files(cfg: GamutConfig) -> list[PublishFile]:
    """Every file of the published dataset, built from ``results/`` (no network).

    Layout: ``data/<table>.parquet`` for each score table, ``data/verdicts/<submission>.parquet``
    for each submission's verdicts, ``provenance.json`` and a ``README.md`` dataset card whose YAML
    ``configs:`` header lets ``datasets.load_dataset(repo, "<table>")`` read each table. Unless
    rubrics are public, verdicts keep only the id/kind/tier/verdict columns.

    Raises:
        HubError: the results folder has no leaderboard or no verdict table yet.
    """
    results = cfg.path(cfg.store.results)
    public = cfg.benchmark.rubrics_public
    lb = results / "leaderboard.parquet"
    verdict_file = results / VERDICT_TABLE
    for need, cmd in ((lb, "gamut score"), (verdict_file, "gamut judge")):
        if not need.is_file():
            raise HubError(f"{need} does not exist; run `{cmd}` (or `gamut run`) first")
    prov_file = results / PROVENANCE_FILE
    provenance: dict[str, Any] | None = (
        json.loads(prov_file.read_text(encoding="utf-8")) if prov_file.is_file() else None
    )
    files: list[PublishFile] = []
    tables: dict[str, tuple[str, int]] = {}
    for f in sorted(results.glob("*.parquet")):
        if f.name == VERDICT_TABLE:
            continue
        df = pd.read_parquet(f)
        if not public:
            df = df.drop(columns=[c for c in TEXT_COLUMNS if c in df.columns])
        path = f"data/{f.stem}.parquet"
        files.append(PublishFile(path, _parquet_bytes(df, provenance)))
        tables[f.stem] = (path, len(df))
    verdicts = pd.read_parquet(verdict_file)
    keep = list(VERDICT_COLUMNS) + (
        [c for c in TEXT_COLUMNS if c in verdicts.columns] if public else []
    )
    verdicts = verdicts[[c for c in keep if c in verdicts.columns]]
    sub_ids: list[str] = []
    for sid, part in verdicts.groupby(verdicts["submission_id"].astype(str), observed=True):
        sub_ids.append(str(sid))
        files.append(
            PublishFile(
                f"data/verdicts/{_safe_name(str(sid))}.parquet", _parquet_bytes(part, provenance)
            )
        )
    tables["verdicts"] = ("data/verdicts/*.parquet", len(verdicts))
    if provenance is not None:
        files.append(
            PublishFile(
                PROVENANCE_FILE,
                (json.dumps(provenance, indent=2, sort_keys=True) + "\n").encode(),
            )
        )
    card = dataset_card(cfg, tables, sub_ids, provenance)
    files.append(PublishFile("README.md", card.encode("utf-8")))
    return files


def dataset_card(
    cfg: GamutConfig,
    tables: dict[str, tuple[str, int]],
    submissions: list[str],
    provenance: dict[str, Any] | None,
) -> str:
    """The dataset card: a YAML header with one ``configs:`` entry per table, then prose."""
    first = ["leaderboard", "verdicts"]
    order = [*first, *sorted(t for t in tables if t not in first)]
    configs = [
        {
            "config_name": name,
            "data_files": [{"split": "train", "path": tables[name][0]}],
            **({"default": True} if name == "leaderboard" else {}),
        }
        for name in order
        if name in tables
    ]
    header = {
        "license": "apache-2.0",
        "pretty_name": cfg.site.title,
        "tags": ["gamut", "leaderboard", "llm-as-judge", "evaluation"],
        "configs": configs,
    }
    prov = provenance or {}
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
        "| config | file(s) | rows |",
        "| --- | --- | --- |",
        *(f"| `{n}` | `{tables[n][0]}` | {tables[n][1]} |" for n in order if n in tables),
        "",
        'Load a table with `datasets.load_dataset(REPO, "leaderboard")` or',
        '`pandas.read_parquet("hf://datasets/REPO/data/leaderboard.parquet")`; one submission\'s',
        "verdicts are in `data/verdicts/<submission_id>.parquet`.",
    ]
    if not cfg.benchmark.rubrics_public:
        lines += [
            "",
            "The meta-rubrics are held: verdicts carry check ids, kinds, tiers and "
            "verdicts only, never rubric or check text.",
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
    cfg: GamutConfig, repo_id: str, *, token_env: str = TOKEN_ENV, private: bool = False
) -> str:
    """Upload the results to the dataset ``repo_id`` as one commit; return the commit URL.

    Raises:
        HubError: bad repo id, no token, or the Hub refused the commit.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    if not _REPO_ID.match(repo_id):
        raise HubError(f"--repo {repo_id!r} must look like ORG/NAME")
    token = hub_token(token_env)
    if token is None:
        raise HubError(f"no Hub token: set {token_env} to a token with write access to {repo_id}")
    files = publish_files(cfg)
    api = HfApi(endpoint=hub_endpoint(), token=token)
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
