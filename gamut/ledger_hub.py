"""The verdict ledger on the Hugging Face Hub: a private dataset that ``gamut ledger pull`` and
``push`` keep in step with the local ledger folder.

The dataset mirrors the ledger's layout (``LEDGER.json``, ``verdicts/``, ``failures/``,
``batches/``). Shards are content-named and never rewritten, so syncing is copying names one side
lacks: :func:`push` sends, in one commit, only the shards the dataset lacks (no commit when it
lacks none; when another push lands first, it reads the dataset again and retries) and never
deletes or rewrites a remote file; :func:`pull` downloads the shards the local ledger lacks,
checks each one (its bytes against its name, its kind and key scheme) and ingests only those that
pass, naming the others.

The dataset must exist and be private (a held ledger's keys are keyed hashes and it has no free
text, but its ids and verdicts are still the maintainers'). The token is ``HF_TOKEN``, read at call
time and never printed; the endpoint is ``GAMUT_HF_ENDPOINT`` or ``HF_ENDPOINT``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.hub import TOKEN_ENV, HubError, hub_endpoint, hub_token
from scoring.errors import Problem
from scoring.ledger import KINDS, MANIFEST, Ledger, merge

if TYPE_CHECKING:
    from huggingface_hub import HfApi

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
_SHARD_PATH = re.compile(r"^(verdicts|failures|batches)/[0-9a-f]{64}\.parquet$")
#: Largest manifest read from the Hub.
MAX_MANIFEST_BYTES = 10_000
#: Commit attempts of one push, and the wait before the k-th retry (k times this, in seconds).
PUSH_ATTEMPTS = 3
PUSH_BACKOFF_S = 0.5


@dataclass
class PushReport:
    """What :func:`push` sent: the shard paths, and the commit (None: nothing was new).

    ``attempts`` counts the reads of the dataset: more than 1 when another push landed between
    a read and its commit; ``sent`` and ``remote_shards`` are those of the last attempt.
    """

    repo_id: str
    sent: list[str] = field(default_factory=list)
    commit_url: str | None = None
    remote_shards: int = 0
    attempts: int = 1


@dataclass
class PullReport:
    """What :func:`pull` did: shards ingested, and the shards refused (named, not ingested)."""

    repo_id: str
    revision: str = ""
    ingested: list[str] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)
    remote_shards: int = 0


def _check_repo_id(repo_id: str) -> None:
    if not _REPO_ID.match(repo_id):
        raise HubError(
            f"ledger dataset {repo_id!r} must look like ORG/NAME ([store] ledger_hub or --repo)"
        )


def _api(token_env: str) -> tuple[HfApi, str]:
    from huggingface_hub import HfApi

    token = hub_token(token_env)
    if token is None:
        raise HubError(
            f"no Hub token: set {token_env} to a token with access to the private ledger dataset"
        )
    return HfApi(endpoint=hub_endpoint(), token=token), token


def _remote(api: HfApi, repo_id: str, token_env: str) -> tuple[str, set[str]]:
    """The dataset's head commit and its file paths; refuses a public or missing dataset."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    try:
        info = api.repo_info(repo_id, repo_type="dataset", revision="main")
    except RepositoryNotFoundError:
        raise HubError(
            f"the ledger dataset {repo_id} does not exist or {token_env} cannot read it: create "
            f"it as a private dataset (hf repo create {repo_id} --repo-type dataset --private) "
            f"and give {token_env} access"
        ) from None
    except HfHubHTTPError as exc:
        raise _http_error(exc, repo_id, token_env, "read") from None
    except OSError as exc:
        raise HubError(
            f"cannot reach the Hub for the ledger dataset {repo_id} ({type(exc).__name__}); "
            "check the network and GAMUT_HF_ENDPOINT"
        ) from None
    if info.private is not True:
        raise HubError(
            f"the ledger dataset {repo_id} is not private; the verdict ledger is never kept in a "
            "public dataset: make it private on the Hub (Settings > visibility), then rerun"
        )
    siblings = getattr(info, "siblings", None) or []
    return str(info.sha), {s.rfilename for s in siblings}


def _status(exc: Any) -> int | str:
    return exc.response.status_code if getattr(exc, "response", None) is not None else "?"


def _http_error(exc: Any, repo_id: str, token_env: str, what: str) -> HubError:
    return HubError(
        f"the Hub answered HTTP {_status(exc)} to the {what} of the ledger dataset {repo_id}; "
        f"check that {token_env} holds a token with {what} access"
    )


def _manifest(ledger: Ledger) -> bytes:
    return (ledger.root / MANIFEST).read_bytes()


def _same_manifest(remote: bytes, ledger: Ledger, repo_id: str) -> None:
    """Refuse a dataset that holds a ledger under another key scheme or held setting."""
    try:
        got = json.loads(remote[:MAX_MANIFEST_BYTES])
    except (UnicodeDecodeError, json.JSONDecodeError):
        got = None
    want = json.loads(_manifest(ledger))
    if not isinstance(got, dict) or any(got.get(k) != want[k] for k in want):
        shown = {k: got.get(k) for k in want} if isinstance(got, dict) else "not a manifest"
        raise HubError(
            f"the ledger dataset {repo_id} holds another ledger ({MANIFEST}: {shown}; this one: "
            f"{want}): another ledger secret or rubric setting; use the matching secret, or "
            "another [store] ledger_hub"
        )


def _local_shards(ledger: Ledger) -> list[str]:
    return [f"{kind}/{name}" for kind in KINDS for name in ledger.shard_names(kind)]


def _plan(
    api: HfApi, ledger: Ledger, repo_id: str, token_env: str, attempt: int
) -> tuple[str, list[Any], PushReport]:
    """Read the dataset's head and files; the operations adding what it lacks, against that head.

    The manifest is checked (or added, when the dataset has none) at every read, as another push
    may have added it since the last one.
    """
    from huggingface_hub import CommitOperationAdd

    head, files = _remote(api, repo_id, token_env)
    report = PushReport(
        repo_id, remote_shards=sum(1 for f in files if _SHARD_PATH.match(f)), attempts=attempt
    )
    ops = []
    if MANIFEST in files:
        _same_manifest(_download(api, repo_id, head, MANIFEST, token_env), ledger, repo_id)
    else:
        ops.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=_manifest(ledger)))
    for path in _local_shards(ledger):
        if path not in files:
            ops.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=ledger.root / path))
            report.sent.append(path)
    return head, ops, report


def push(
    ledger: Ledger,
    repo_id: str,
    *,
    token_env: str = TOKEN_ENV,
    attempts: int = PUSH_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> PushReport:
    """Send the shards the dataset ``repo_id`` lacks, as one commit (none when it lacks none).

    The local ledger is verified first; a ledger with a problem is not pushed. Remote files are
    never deleted or rewritten. The commit names the head it was computed against; when another
    push lands first (the Hub answers 412), the dataset is read again and what it still lacks is
    committed, up to ``attempts`` times in all, waiting ``k * PUSH_BACKOFF_S`` seconds before the
    k-th retry. Shards are content-named and append-only, so nothing is sent twice or dropped.

    Raises:
        HubError: no token, a missing or public dataset, a dataset holding another ledger, the
            Hub refused the commit, another push landed first at every attempt, or the local
            ledger has problems (listed).
    """
    from huggingface_hub.errors import HfHubHTTPError

    _check_repo_id(repo_id)
    problems = ledger.verify()
    if problems:
        raise HubError(
            f"the ledger {ledger.root} has {len(problems)} problem(s); nothing was pushed "
            "(run `gamut ledger verify`):\n" + "\n".join(f"  {p}" for p in problems[:20])
        )
    api, _ = _api(token_env)
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            sleep(PUSH_BACKOFF_S * (attempt - 1))
        head, ops, report = _plan(api, ledger, repo_id, token_env, attempt)
        if not report.sent:
            return report
        try:
            info = api.create_commit(
                repo_id,
                ops,
                commit_message=f"Ledger: {len(report.sent)} new shard(s)",
                repo_type="dataset",
                revision="main",
                parent_commit=head,
            )
        except HfHubHTTPError as exc:
            if _status(exc) == 412:  # another push landed since the read: read again
                continue
            raise _http_error(exc, repo_id, token_env, "write") from None
        report.commit_url = str(info.commit_url)
        return report
    raise HubError(
        f"the ledger dataset {repo_id} changed before each of {attempts} commit attempts (other "
        "pushes landing first); nothing was pushed: run `gamut ledger push` again once the other "
        "pushes are done"
    )


def _download(api: HfApi, repo_id: str, revision: str, path: str, token_env: str) -> bytes:
    from huggingface_hub.errors import HfHubHTTPError

    with tempfile.TemporaryDirectory(prefix=".gamut-ledger-") as tmp:
        try:
            got = api.hf_hub_download(
                repo_id, path, repo_type="dataset", revision=revision, local_dir=tmp
            )
        except HfHubHTTPError as exc:
            raise _http_error(exc, repo_id, token_env, "read") from None
        return Path(got).read_bytes()


def pull(ledger: Ledger, repo_id: str, *, token_env: str = TOKEN_ENV) -> PullReport:
    """Download the shards the local ledger lacks from ``repo_id``; ingest those that check out.

    Each downloaded shard is checked like :meth:`Ledger.verify` checks a local one (bytes against
    name, readable, this ledger's kind and key scheme) in a staging folder; one that fails is
    named in the report and not ingested. The caller holds the ledger's lock.

    Raises:
        LedgerConflict: a pulled verdict differs from a local one for the same key (named);
            nothing is ingested.
        HubError: no token, a missing or public dataset, a dataset holding another ledger, or the
            Hub refused a download.
    """
    from huggingface_hub.errors import HfHubHTTPError

    _check_repo_id(repo_id)
    api, _ = _api(token_env)
    head, files = _remote(api, repo_id, token_env)
    report = PullReport(repo_id, head, remote_shards=sum(1 for f in files if _SHARD_PATH.match(f)))
    if MANIFEST in files:
        _same_manifest(_download(api, repo_id, head, MANIFEST, token_env), ledger, repo_id)
    have = set(_local_shards(ledger))
    missing = sorted(f for f in files if _SHARD_PATH.match(f) and f not in have)
    stray = sorted(
        f for f in files if f != MANIFEST and not _SHARD_PATH.match(f) and not f.startswith(".")
    )
    report.refused.extend(
        Problem(f"hf://datasets/{repo_id}/{f}", None, "not a ledger shard; not pulled", "")
        for f in stray
    )
    if not missing:
        return report
    stage = Path(tempfile.mkdtemp(prefix=".pull-", dir=ledger.root))
    try:
        try:
            api.snapshot_download(
                repo_id,
                repo_type="dataset",
                revision=head,
                allow_patterns=missing,
                local_dir=stage,
            )
        except HfHubHTTPError as exc:
            raise _http_error(exc, repo_id, token_env, "read") from None
        staged = Ledger(stage, ledger.scheme, ledger.held)
        for path in missing:
            kind, name = path.split("/")
            src = stage / kind / name
            where = f"hf://datasets/{repo_id}/{path}"
            bad = (
                staged.verify_shard(kind, src)
                if src.is_file()
                else [Problem(where, None, "not downloaded", "run `gamut ledger pull` again")]
            )
            if bad:
                report.refused.extend(Problem(where, None, p.message, p.fix) for p in bad)
                src.unlink(missing_ok=True)
        merged = merge(ledger, staged)  # names conflicting verdicts; then copies, or nothing
        report.ingested = sorted(f"{k}/{n}" for k, names in merged.copied.items() for n in names)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return report


__all__ = ["PullReport", "PushReport", "pull", "push"]
