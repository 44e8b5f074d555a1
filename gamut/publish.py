"""Publishing results to a Hugging Face Hub dataset.

Published results go to a dataset as one commit built by :func:`build_publish_operations` (pure:
reads files, touches no network) and sent by :func:`publish_results`; the references, endpoint and
token are :mod:`gamut.hub`'s.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.hub import REPO_ID, TOKEN_ENV, hub_api, hub_token
from scoring.errors import GamutError

if TYPE_CHECKING:
    from gamut.project import Project


@dataclass(frozen=True)
class PublishFile:
    """One file of the published dataset: its path in the repo and its bytes."""

    path_in_repo: str
    data: bytes


def publish_files(project: Project, repo_id: str | None = None) -> list[PublishFile]:
    """Every file of the published dataset, built from ``results/`` (no network).

    Layout: the site's ``downloads/`` folder (:func:`generator.dataset_folder`), one set of files
    with one schema: ``<table>.parquet`` (and CSV) for the questions, the scored submissions'
    responses and every score table, ``verdicts.parquet`` and ``verdicts/<submission>.parquet``,
    the Every Eval Ever export, the Croissant description, ``provenance.json`` and a
    ``README.md`` dataset card whose YAML ``configs:`` header lets ``datasets.load_dataset(repo,
    "<table>")`` read each table with rows. Unless rubrics are public, verdicts keep only the
    id/kind/tier/verdict columns.

    Args:
        project: the deployment.
        repo_id: the dataset the files are for (the card's loading snippet names it); default
            ``publish.hf_dataset``.

    Raises:
        GamutError: no repo id, or the results folder has no leaderboard or no verdict table yet.
        GamutError: a column is undocumented, or a scored response file no longer reads clean.
    """
    import generator

    repo = repo_id or project.cfg.publish.hf_dataset
    if not repo or not REPO_ID.match(repo):
        raise GamutError(
            f"the dataset {repo!r} must look like ORG/NAME: pass --repo or set publish.hf_dataset"
        )
    layout = project.results_layout
    for need, cmd in (
        (layout.table("leaderboard"), "gamut score"),
        (layout.verdicts, "gamut judge"),
    ):
        if not need.is_file():
            raise GamutError(f"{need} does not exist; run `{cmd}` (or `gamut run`) first")
    with tempfile.TemporaryDirectory(prefix="gamut-publish-") as tmp:
        folder = generator.dataset_folder(project.site_spec(), Path(tmp), repo)
        return [
            PublishFile(path.relative_to(folder).as_posix(), path.read_bytes())
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        ]


#: The endings of the data files a publish replaces (other files of the repo stay).
STALE = (".parquet", ".csv", ".csv.gz", ".jsonl")


def build_publish_operations(files: list[PublishFile], existing: list[str]) -> list[Any]:
    """The commit operations: add every file; delete the stale data files no longer built
    (:data:`STALE`: under ``data/``, the layout before this one, or ``verdicts/``, or a table).

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
        if p not in built and (p.startswith(("data/", "verdicts/")) or p.endswith(STALE))
    ]
    return ops


def publish_results(
    project: Project, repo_id: str, *, token_env: str = TOKEN_ENV, private: bool = False
) -> str:
    """Upload the results to the dataset ``repo_id`` as one commit; return the commit URL.

    Raises:
        GamutError: bad repo id, no token, or the Hub refused the commit.
    """
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    if not REPO_ID.match(repo_id):
        raise GamutError(f"--repo {repo_id!r} must look like ORG/NAME")
    token = hub_token(token_env)
    if token is None:
        raise GamutError(f"no Hub token: set {token_env} to a token with write access to {repo_id}")
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
        raise GamutError(
            f"the Hub refused the upload to {repo_id} (HTTP {status}); check that "
            f"{token_env} has write access"
        ) from None
    return str(info.commit_url)
