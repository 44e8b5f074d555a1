"""Publishing results to a Hugging Face Hub dataset as one commit."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.hub import REPO_ID, TOKEN_ENV, http_status, hub_api, hub_token
from scoring.errors import GamutError

if TYPE_CHECKING:
    from gamut.project import Project


@dataclass(frozen=True)
class PublishFile:
    """One file of the published dataset: its path in the repo and its bytes."""

    path_in_repo: str
    data: bytes


def publish_files(project: Project, repo_id: str | None = None) -> list[PublishFile]:
    """Every file of the published dataset (the site's ``downloads/`` folder, built by
    :func:`generator.dataset_folder`, with a dataset card for ``repo_id``), with no network."""
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
    """The commit operations: add every file; delete the ``existing`` data files no longer
    built (under ``data/`` or ``verdicts/``, or ending in :data:`STALE`)."""
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
    """Upload the results to the dataset ``repo_id`` as one commit; return the commit URL."""
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
        raise GamutError(
            f"the Hub refused the upload to {repo_id} (HTTP {http_status(exc)}); check that "
            f"{token_env} has write access"
        ) from None
    return str(info.commit_url)
