"""The verdict ledger on the Hugging Face Hub: a private dataset that ``gamut ledger pull`` and
``push`` keep in step with the local ledger folder.

The dataset mirrors the ledger's layout (``LEDGER.json``, ``verdicts/``, ``failures/``,
``batches/``, ``pushes/``). Shards are content-named (held: MAC-named) and never rewritten, so
syncing is copying names one side lacks: :func:`pull` downloads the files the local ledger lacks,
checks each one like ``Ledger.verify`` does and ingests only those that pass, naming the others;
:func:`push` first does the same (so the remote's verdicts are local, and count before the local
ones), then sends, in one commit, the shards the dataset lacks with a push record
(:mod:`scoring.ledger.order`) naming them after the dataset's last record (no commit when it
lacks none; when another push lands first, it reads the dataset again and retries), and never
deletes or rewrites a remote file.

A key judged by two jobs with different verdicts is never an error: the verdict pushed first
counts on every machine, the other is a duplicate kept aside in its shard, and both reports count
them.

The dataset must exist and be private (a held ledger's keys are keyed hashes and it has no free
text, but its ids and verdicts are still the maintainers'). The token is ``HF_TOKEN``, read at call
time and never printed; the endpoint is ``GAMUT_HF_ENDPOINT`` or ``HF_ENDPOINT``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.hub import TOKEN_ENV, hub_api, hub_token
from scoring.errors import GamutError, Problem
from scoring.ledger import KINDS, MANIFEST, PUSHES, Ledger
from scoring.ledger.compact import COMPACT_AT, compact, small_shards
from scoring.ledger.order import COMPACTIONS, ranks, read_compactions, record_bytes, record_name
from scoring.ledger.store import copy_checked
from scoring.storage import make_staging_folder, open_regular, remove_stale_staging

if TYPE_CHECKING:
    from huggingface_hub import HfApi

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
_SHARD_PATH = re.compile(r"^(verdicts|failures|batches)/[0-9a-f]{64}\.parquet$")
_RECORD_PATH = re.compile(r"^(pushes|compactions)/[0-9a-f]{64}\.json$")
#: Largest manifest read from the Hub.
MAX_MANIFEST_BYTES = 10_000
#: Commit attempts of one push, and the wait before the k-th retry (k times this, in seconds).
PUSH_ATTEMPTS = 3
PUSH_BACKOFF_S = 0.5
#: The prefix of a pull's staging folder in the ledger (its process id follows).
PULL_STAGING = ".pull-"
#: Files a pull downloads at once (each one request; the waits overlap).
PULL_THREADS = 8


@dataclass
class PullReport:
    """What :func:`pull` did: files ingested, the files refused (named, not ingested), and the
    duplicates the ledger holds (verdicts of keys judged twice that do not count)."""

    repo_id: str
    revision: str = ""
    ingested: list[str] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)
    remote_shards: int = 0
    duplicates: int = 0


@dataclass
class PushReport(PullReport):
    """What :func:`push` sent: the shard paths, and the commit (None: nothing was new); and what
    it pulled first (:class:`PullReport`'s fields).

    ``attempts`` counts the reads of the dataset: more than 1 when another push landed between
    a read and its commit; ``sent`` and ``remote_shards`` are those of the last attempt.
    """

    sent: list[str] = field(default_factory=list)
    commit_url: str | None = None
    attempts: int = 1
    compacted: int = 0


def _check_repo_id(repo_id: str) -> None:
    if not _REPO_ID.match(repo_id):
        raise GamutError(
            f"ledger dataset {repo_id!r} must look like ORG/NAME ([store] ledger_hub or --repo)"
        )


def _api(token_env: str) -> tuple[HfApi, str]:
    token = hub_token(token_env)
    if token is None:
        raise GamutError(
            f"no Hub token: set {token_env} to a token with access to the private ledger dataset"
        )
    return hub_api(token), token


def _remote(api: HfApi, repo_id: str, token_env: str) -> tuple[str, set[str]]:
    """The dataset's head commit and its file paths; refuses a public or missing dataset."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    try:
        info = api.repo_info(repo_id, repo_type="dataset", revision="main")
    except RepositoryNotFoundError:
        raise GamutError(
            f"the ledger dataset {repo_id} does not exist or {token_env} cannot read it: create "
            f"it as a private dataset (hf repo create {repo_id} --repo-type dataset --private) "
            f"and give {token_env} access"
        ) from None
    except HfHubHTTPError as exc:
        raise _http_error(exc, repo_id, token_env, "read") from None
    except OSError as exc:
        raise GamutError(
            f"cannot reach the Hub for the ledger dataset {repo_id} ({type(exc).__name__}); "
            "check the network and GAMUT_HF_ENDPOINT"
        ) from None
    if info.private is not True:
        raise GamutError(
            f"the ledger dataset {repo_id} is not private; the verdict ledger is never kept in a "
            "public dataset: make it private on the Hub (Settings > visibility), then rerun"
        )
    siblings = getattr(info, "siblings", None) or []
    return str(info.sha), {s.rfilename for s in siblings}


def _status(exc: Any) -> int | str:
    return exc.response.status_code if getattr(exc, "response", None) is not None else "?"


def _http_error(exc: Any, repo_id: str, token_env: str, what: str) -> GamutError:
    return GamutError(
        f"the Hub answered HTTP {_status(exc)} to the {what} of the ledger dataset {repo_id}; "
        f"check that {token_env} holds a token with {what} access"
    )


def _manifest(ledger: Ledger) -> bytes:
    with open_regular(ledger.root / MANIFEST) as f:
        return f.read(MAX_MANIFEST_BYTES)


def _same_manifest(remote: bytes, ledger: Ledger, repo_id: str) -> None:
    """Refuse a dataset that holds a ledger under another key scheme or held setting."""
    try:
        got = json.loads(remote[:MAX_MANIFEST_BYTES])
    except (UnicodeDecodeError, json.JSONDecodeError):
        got = None
    want = json.loads(_manifest(ledger))
    if not isinstance(got, dict) or any(got.get(k) != want[k] for k in want):
        shown = {k: got.get(k) for k in want} if isinstance(got, dict) else "not a manifest"
        raise GamutError(
            f"the ledger dataset {repo_id} holds another ledger ({MANIFEST}: {shown}; this one: "
            f"{want}): another ledger secret or rubric setting; use the matching secret, or "
            "another [store] ledger_hub"
        )


def _local_files(ledger: Ledger) -> list[str]:
    shards = [f"{kind}/{name}" for kind in KINDS for name in ledger.shard_names(kind)]
    records = [f"{d}/{n}" for d in (PUSHES, COMPACTIONS) for n in ledger.record_names(d)]
    return shards + records


def _plan(
    api: HfApi, ledger: Ledger, repo_id: str, token_env: str, attempt: int
) -> tuple[str, list[Any], PushReport, tuple[str | None, list[str]]]:
    """Read the dataset's head and files, ingest what the local ledger lacks (checked, as
    :func:`pull` does); the operations adding what the dataset lacks, against that head, and
    the push record they carry (the record before it, the shards it orders).

    The manifest is checked (or added, when the dataset has none) at every read, as another push
    may have added it since the last one. The record lists first the remote's shards that no
    record names yet (the dataset's own order then counts for them too), then the shards sent;
    not a compaction's shards, which count where the shards they replace did. When the ledger
    has more than ``COMPACT_AT`` small pushed shards, they are compacted first, and the
    compaction is sent with the rest.
    """
    from huggingface_hub import CommitOperationAdd

    head, files = _remote(api, repo_id, token_env)
    report = PushReport(
        repo_id, head, remote_shards=sum(1 for f in files if _SHARD_PATH.match(f)), attempts=attempt
    )
    ops = []
    if MANIFEST in files:
        _same_manifest(_download(api, repo_id, head, MANIFEST, token_env), ledger, repo_id)
    else:
        ops.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=_manifest(ledger)))
    _fetch(api, ledger, repo_id, head, files, token_env, report)
    if small_shards(ledger) > COMPACT_AT:
        report.compacted = compact(ledger).n_replaced
    remote = [r for r in ledger.push_records() if f"{PUSHES}/{r.name}" in files]
    named = ranks(remote)
    compacted = {s for c in read_compactions(ledger.root, ledger.scheme) for s in c.shards}
    order = ledger.ordered_paths()
    adopted = [p for p in order if p in files and p not in named and p not in compacted]
    shards = [p for p in order if p not in files]
    records = [f"{COMPACTIONS}/{n}" for n in ledger.record_names(COMPACTIONS)]
    report.sent = shards + [p for p in records if p not in files]
    for path in report.sent:
        ops.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=ledger.root / path))
    record = (
        remote[-1].name if remote else None,
        adopted + [p for p in shards if p not in compacted],
    )
    return head, ops, report, record


def push(
    ledger: Ledger,
    repo_id: str,
    *,
    token_env: str = TOKEN_ENV,
    attempts: int = PUSH_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> PushReport:
    """Send the shards the dataset ``repo_id`` lacks, as one commit (none when it lacks none),
    with the push record that orders them after the dataset's.

    The local ledger is verified first; a ledger with a problem is not pushed. Then the files
    the dataset has and the local ledger lacks are pulled (checked; a file that fails is named
    in the report and not ingested), so that the remote's verdicts count before the local ones:
    a local verdict that differs is a duplicate kept aside, never an error. Remote files are
    never deleted or rewritten. The caller holds the ledger's lock.

    The commit names the head it was computed against; when another push lands first (the Hub
    answers 412), the dataset is read (and pulled) again and what it still lacks is committed,
    up to ``attempts`` times in all, waiting ``k * PUSH_BACKOFF_S`` seconds before the k-th
    retry. Shards are content-named and append-only, so nothing is sent twice or dropped.

    Raises:
        GamutError: no token, a missing or public dataset, a dataset holding another ledger, the
            Hub refused the commit, another push landed first at every attempt, or the local
            ledger has problems (listed).
    """
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError

    _check_repo_id(repo_id)
    problems = ledger.verify()
    if problems:
        raise GamutError(
            f"the ledger {ledger.root} has {len(problems)} problem(s); nothing was pushed "
            "(run `gamut ledger verify`):\n" + "\n".join(f"  {p}" for p in problems[:20])
        )
    api, _ = _api(token_env)
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            sleep(PUSH_BACKOFF_S * (attempt - 1))
        head, ops, report, (after, shards) = _plan(api, ledger, repo_id, token_env, attempt)
        if not report.sent:
            report.duplicates = ledger.duplicates()[0]
            return report
        data = record_bytes(after, shards)
        record = f"{PUSHES}/{record_name(data, ledger.scheme)}"
        ops.append(CommitOperationAdd(path_in_repo=record, path_or_fileobj=data))
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
        ledger.add_push_record(after, shards)  # the same bytes: the same name
        report.commit_url = str(info.commit_url)
        report.duplicates = ledger.duplicates()[0]
        return report
    raise GamutError(
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


def _download_each(
    api: HfApi, repo_id: str, head: str, paths: list[str], stage: Path, token_env: str
) -> None:
    """Download exactly ``paths`` at ``head`` into ``stage``, eight requests at a time: one
    request per file, none matching patterns (whose cost grows with files times patterns). A
    file the Hub does not have is left out (the caller names it)."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    def one(path: str) -> None:
        with contextlib.suppress(EntryNotFoundError):  # named by the caller: not downloaded
            api.hf_hub_download(repo_id, path, repo_type="dataset", revision=head, local_dir=stage)

    with ThreadPoolExecutor(PULL_THREADS) as pool:
        try:
            for _ in pool.map(one, paths):
                pass
        except HfHubHTTPError as exc:
            raise _http_error(exc, repo_id, token_env, "read") from None


def pull(ledger: Ledger, repo_id: str, *, token_env: str = TOKEN_ENV) -> PullReport:
    """Download the files the local ledger lacks from ``repo_id``; ingest those that check out.

    Each downloaded shard or push record is checked like :meth:`Ledger.verify` checks a local
    one (held: its MAC; its size, metadata and values; its kind and key scheme) in a staging
    folder; one that fails is named in the report and not ingested. A key judged twice is no
    error: the report counts the duplicates kept aside. The caller holds the ledger's lock.

    Raises:
        GamutError: no token, a missing or public dataset, a dataset holding another ledger, or the
            Hub refused a download.
    """
    _check_repo_id(repo_id)
    api, _ = _api(token_env)
    head, files = _remote(api, repo_id, token_env)
    report = PullReport(repo_id, head, remote_shards=sum(1 for f in files if _SHARD_PATH.match(f)))
    if MANIFEST in files:
        _same_manifest(_download(api, repo_id, head, MANIFEST, token_env), ledger, repo_id)
    _fetch(api, ledger, repo_id, head, files, token_env, report)
    report.duplicates = ledger.duplicates()[0]
    return report


def _fetch(
    api: HfApi,
    ledger: Ledger,
    repo_id: str,
    head: str,
    files: set[str],
    token_env: str,
    report: PullReport,
) -> None:
    """Download the shards and push records at ``head`` the local ledger lacks into a staging
    folder, check each one, and merge those that pass (into ``report``: what was ingested, what
    was refused). The staging folders of a pull or push that was killed are removed first."""
    remove_stale_staging(ledger.root, (PULL_STAGING,))  # SIGKILL skips every finally
    have = set(_local_files(ledger))
    ours = [f for f in files if _SHARD_PATH.match(f) or _RECORD_PATH.match(f)]
    missing = sorted(f for f in ours if f not in have)
    stray = sorted(f for f in files if f != MANIFEST and f not in ours and not f.startswith("."))
    report.refused.extend(
        Problem(f"hf://datasets/{repo_id}/{f}", None, "not a ledger file; not pulled", "")
        for f in stray
    )
    # the records first: a compaction whose shards are there spares the shards it replaces
    records = [f for f in missing if _RECORD_PATH.match(f)]
    _ingest(api, ledger, repo_id, head, records, token_env, report)
    there = files | set(_local_files(ledger))
    spared = {
        p
        for c in read_compactions(ledger.root, ledger.scheme)
        if set(c.shards) <= there
        for p in c.replaces
    }
    shards = [f for f in missing if _SHARD_PATH.match(f)]
    _ingest(api, ledger, repo_id, head, [f for f in shards if f not in spared], token_env, report)
    # a compaction that does not count after all (a shard refused): the shards it replaces
    _, _, replaced = ledger.reading_order()
    rest = [f for f in shards if f in spared and f not in replaced]
    _ingest(api, ledger, repo_id, head, rest, token_env, report)
    report.ingested.sort()


def _ingest(
    api: HfApi,
    ledger: Ledger,
    repo_id: str,
    head: str,
    paths: list[str],
    token_env: str,
    report: PullReport,
) -> None:
    """Download ``paths`` into a staging folder, check each one, and copy those that pass into
    the ledger (into ``report``: what was ingested, what was refused)."""
    if not paths:
        return
    stage = make_staging_folder(ledger.root, PULL_STAGING)
    stage.chmod(0o700)  # downloads of a held ledger: nobody else's to read
    try:
        _download_each(api, repo_id, head, paths, stage, token_env)
        staged = Ledger(stage, ledger.scheme, ledger.held)
        for path in paths:
            kind, name = path.split("/")
            src = stage / kind / name
            where = f"hf://datasets/{repo_id}/{path}"
            if not src.is_file():
                bad = [Problem(where, None, "not downloaded", "run `gamut ledger pull` again")]
            elif kind in (PUSHES, COMPACTIONS):
                bad = staged.verify_record(src)
            else:
                bad = staged.verify_shard(kind, src)
            if bad:
                report.refused.extend(Problem(where, None, p.message, p.fix) for p in bad)
                src.unlink(missing_ok=True)
        merged = copy_checked(ledger, staged)  # each file was checked above
        report.ingested += [f"{k}/{n}" for k, names in merged.copied.items() for n in names]
    finally:
        shutil.rmtree(stage, ignore_errors=True)
