"""The verdict ledger on the Hugging Face Hub: a private dataset that ``gamut ledger pull`` and
``push`` keep in step with the local ledger folder (same layout).

Shards are content-named (held: MAC-named) and never rewritten, so syncing is copying the names one
side lacks. :func:`pull` checks each downloaded file like ``Ledger.verify`` and ingests only those
that pass, naming the others; :func:`push` pulls first (the remote's verdicts count before the
local ones: a key judged twice keeps the first pushed, the other is a duplicate kept aside), then
sends in one commit what the dataset lacks with a push record (:mod:`scoring.ledger.order`),
retrying when another push lands first; it never deletes or rewrites a remote file.

The dataset must exist and be private (a held ledger has no free text, but its ids and verdicts
are the maintainers'). The token (``HF_TOKEN``) is read at call time and never printed.
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

from gamut.hub import TOKEN_ENV, http_status, hub_api, hub_token
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
    """What :func:`pull` did: files ingested and refused, and the duplicates the ledger holds."""

    repo_id: str
    revision: str = ""
    ingested: list[str] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)
    remote_shards: int = 0
    duplicates: int = 0


@dataclass
class PushReport(PullReport):
    """What :func:`push` pulled, then sent (the commit is None when nothing was new); ``attempts``
    counts the reads of the dataset (more than 1 when another push landed first)."""

    sent: list[str] = field(default_factory=list)
    commit_url: str | None = None
    attempts: int = 1
    compacted: int = 0


@dataclass
class _Hub:
    """The ledger dataset, the client that reads it and the head commit last read."""

    api: HfApi
    repo_id: str
    token_env: str
    head: str = ""

    @classmethod
    def open(cls, repo_id: str, token_env: str) -> _Hub:
        if not _REPO_ID.match(repo_id):
            raise GamutError(
                f"ledger dataset {repo_id!r} must look like ORG/NAME ([store] ledger_hub or --repo)"
            )
        token = hub_token(token_env)
        if token is None:
            raise GamutError(
                f"no Hub token: set {token_env} to a token with access to the private ledger "
                "dataset"
            )
        return cls(hub_api(token), repo_id, token_env)

    def error(self, exc: Any, what: str) -> GamutError:
        return GamutError(
            f"the Hub answered HTTP {http_status(exc)} to the {what} of the ledger dataset "
            f"{self.repo_id}; check that {self.token_env} holds a token with {what} access"
        )

    def download(self, path: str) -> bytes:
        from huggingface_hub.errors import HfHubHTTPError

        with tempfile.TemporaryDirectory(prefix=".gamut-ledger-") as tmp:
            try:
                got = self.api.hf_hub_download(
                    self.repo_id, path, repo_type="dataset", revision=self.head, local_dir=tmp
                )
            except HfHubHTTPError as exc:
                raise self.error(exc, "read") from None
            return Path(got).read_bytes()


def _remote(hub: _Hub) -> set[str]:
    """Read the dataset's head commit; its file paths. Refuses a public or missing dataset."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    repo_id, token_env = hub.repo_id, hub.token_env
    try:
        info = hub.api.repo_info(repo_id, repo_type="dataset", revision="main")
    except RepositoryNotFoundError:
        raise GamutError(
            f"the ledger dataset {repo_id} does not exist or {token_env} cannot read it: create "
            f"it as a private dataset (hf repo create {repo_id} --repo-type dataset --private) "
            f"and give {token_env} access"
        ) from None
    except HfHubHTTPError as exc:
        raise hub.error(exc, "read") from None
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
    hub.head = str(info.sha)
    return {s.rfilename for s in getattr(info, "siblings", None) or []}


def _manifest(ledger: Ledger) -> bytes:
    with open_regular(ledger.root / MANIFEST) as f:
        return f.read(MAX_MANIFEST_BYTES)


def _same_manifest(hub: _Hub, ledger: Ledger) -> None:
    """Refuse a dataset that holds a ledger under another key scheme or held setting."""
    try:
        got = json.loads(hub.download(MANIFEST)[:MAX_MANIFEST_BYTES])
    except (UnicodeDecodeError, json.JSONDecodeError):
        got = None
    want = json.loads(_manifest(ledger))
    if not isinstance(got, dict) or any(got.get(k) != want[k] for k in want):
        shown = {k: got.get(k) for k in want} if isinstance(got, dict) else "not a manifest"
        raise GamutError(
            f"the ledger dataset {hub.repo_id} holds another ledger ({MANIFEST}: {shown}; this "
            f"one: {want}): another ledger secret or rubric setting; use the matching secret, or "
            "another [store] ledger_hub"
        )


def _local_files(ledger: Ledger) -> list[str]:
    shards = [f"{kind}/{name}" for kind in KINDS for name in ledger.shard_names(kind)]
    records = [f"{d}/{n}" for d in (PUSHES, COMPACTIONS) for n in ledger.record_names(d)]
    return shards + records


def _plan(
    hub: _Hub, ledger: Ledger, attempt: int
) -> tuple[list[Any], PushReport, tuple[str | None, list[str]]]:
    """Read the dataset and pull what the local ledger lacks; the operations adding what the
    dataset lacks, and the push record they carry (the record before it, the shards it orders).

    The manifest is checked (or added) at every read: another push may have added it. The
    record lists first the remote's shards no record names yet, then the shards sent; not a
    compaction's shards, which count where the shards they replace did. Over ``COMPACT_AT``
    small pushed shards, the ledger is compacted first and the compaction sent with the rest.
    """
    from huggingface_hub import CommitOperationAdd

    files = _remote(hub)
    report = PushReport(
        hub.repo_id,
        hub.head,
        remote_shards=sum(1 for f in files if _SHARD_PATH.match(f)),
        attempts=attempt,
    )
    ops = []
    if MANIFEST in files:
        _same_manifest(hub, ledger)
    else:
        ops.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=_manifest(ledger)))
    _fetch(hub, ledger, files, report)
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
    return ops, report, record


def push(
    ledger: Ledger,
    repo_id: str,
    *,
    token_env: str = TOKEN_ENV,
    attempts: int = PUSH_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> PushReport:
    """Send what the dataset ``repo_id`` lacks as one commit (none when nothing), with the push
    record ordering it after the dataset's; the local ledger is verified, then pulled into first.

    The commit names the head it was computed against; when another push lands first (HTTP
    412), the dataset is read and pulled again, up to ``attempts`` times, waiting
    ``k * PUSH_BACKOFF_S`` seconds before the k-th retry. The caller holds the ledger's lock.
    """
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError

    hub = _Hub.open(repo_id, token_env)
    problems = ledger.verify()
    if problems:
        raise GamutError(
            f"the ledger {ledger.root} has {len(problems)} problem(s); nothing was pushed "
            "(run `gamut ledger verify`):\n" + "\n".join(f"  {p}" for p in problems[:20])
        )
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            sleep(PUSH_BACKOFF_S * (attempt - 1))
        ops, report, (after, shards) = _plan(hub, ledger, attempt)
        if not report.sent:
            report.duplicates = ledger.duplicates()[0]
            return report
        data = record_bytes(after, shards)
        record = f"{PUSHES}/{record_name(data, ledger.scheme)}"
        ops.append(CommitOperationAdd(path_in_repo=record, path_or_fileobj=data))
        try:
            info = hub.api.create_commit(
                repo_id,
                ops,
                commit_message=f"Ledger: {len(report.sent)} new shard(s)",
                repo_type="dataset",
                revision="main",
                parent_commit=report.revision,
            )
        except HfHubHTTPError as exc:
            if http_status(exc) == 412:  # another push landed since the read: read again
                continue
            raise hub.error(exc, "write") from None
        ledger.add_push_record(after, shards)  # the same bytes: the same name
        report.commit_url = str(info.commit_url)
        report.duplicates = ledger.duplicates()[0]
        return report
    raise GamutError(
        f"the ledger dataset {repo_id} changed before each of {attempts} commit attempts (other "
        "pushes landing first); nothing was pushed: run `gamut ledger push` again once the other "
        "pushes are done"
    )


def _download_each(hub: _Hub, paths: list[str], stage: Path) -> None:
    """Download exactly ``paths`` into ``stage``, a few at a time: one request per file, no
    patterns (whose cost grows with files times patterns). A file the Hub lacks is left out."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    def one(path: str) -> None:
        with contextlib.suppress(EntryNotFoundError):  # named by the caller: not downloaded
            hub.api.hf_hub_download(
                hub.repo_id, path, repo_type="dataset", revision=hub.head, local_dir=stage
            )

    with ThreadPoolExecutor(PULL_THREADS) as pool:
        try:
            for _ in pool.map(one, paths):
                pass
        except HfHubHTTPError as exc:
            raise hub.error(exc, "read") from None


def pull(ledger: Ledger, repo_id: str, *, token_env: str = TOKEN_ENV) -> PullReport:
    """Download the files the local ledger lacks from ``repo_id``; ingest those that check out
    (like :meth:`Ledger.verify`: MAC, size, metadata, values, kind, key scheme) and name the
    others. The caller holds the ledger's lock."""
    hub = _Hub.open(repo_id, token_env)
    files = _remote(hub)
    report = PullReport(
        repo_id, hub.head, remote_shards=sum(1 for f in files if _SHARD_PATH.match(f))
    )
    if MANIFEST in files:
        _same_manifest(hub, ledger)
    _fetch(hub, ledger, files, report)
    report.duplicates = ledger.duplicates()[0]
    return report


def _fetch(hub: _Hub, ledger: Ledger, files: set[str], report: PullReport) -> None:
    """Download, check and merge the shards and records the local ledger lacks (after removing
    the staging folders of a killed pull or push)."""
    remove_stale_staging(ledger.root, (PULL_STAGING,))  # SIGKILL skips every finally
    have = set(_local_files(ledger))
    ours = [f for f in files if _SHARD_PATH.match(f) or _RECORD_PATH.match(f)]
    missing = sorted(f for f in ours if f not in have)
    stray = sorted(f for f in files if f != MANIFEST and f not in ours and not f.startswith("."))
    report.refused.extend(
        Problem(f"hf://datasets/{hub.repo_id}/{f}", None, "not a ledger file; not pulled", "")
        for f in stray
    )
    # the records first: a compaction whose shards are there spares the shards it replaces
    records = [f for f in missing if _RECORD_PATH.match(f)]
    _ingest(hub, ledger, records, report)
    there = files | set(_local_files(ledger))
    spared = {
        p
        for c in read_compactions(ledger.root, ledger.scheme)
        if set(c.shards) <= there
        for p in c.replaces
    }
    shards = [f for f in missing if _SHARD_PATH.match(f)]
    _ingest(hub, ledger, [f for f in shards if f not in spared], report)
    # a compaction that does not count after all (a shard refused): the shards it replaces
    _, _, replaced = ledger.reading_order()
    rest = [f for f in shards if f in spared and f not in replaced]
    _ingest(hub, ledger, rest, report)
    report.ingested.sort()


def _ingest(hub: _Hub, ledger: Ledger, paths: list[str], report: PullReport) -> None:
    """Download ``paths`` into a staging folder, check each, copy those that pass."""
    if not paths:
        return
    stage = make_staging_folder(ledger.root, PULL_STAGING)
    stage.chmod(0o700)  # downloads of a held ledger: nobody else's to read
    try:
        _download_each(hub, paths, stage)
        staged = Ledger(stage, ledger.scheme, ledger.held)
        for path in paths:
            kind, name = path.split("/")
            src = stage / kind / name
            where = f"hf://datasets/{hub.repo_id}/{path}"
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
