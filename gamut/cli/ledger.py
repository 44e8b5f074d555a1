"""``gamut ledger pull | push | merge | compact | verify``: the verdict ledger, the store of record
(a local folder, synced with a private Hugging Face dataset, ``[store] ledger_hub``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gamut.cli._common import config_option, err_console, fail, get_project, handle_errors

if TYPE_CHECKING:
    from gamut.project import Project

#: Problems listed one by one before the rest are only counted.
MAX_LISTED = 50

repo_option = click.option(
    "--repo",
    "repo",
    default=None,
    metavar="ORG/NAME",
    help="The private ledger dataset [default: [store] ledger_hub of the config].",
)


def _duplicates(n: int) -> None:
    if n:
        err_console.print(
            f"{n} duplicate verdict(s) kept aside: keys judged twice with different verdicts; "
            "the one pushed first counts (the others are kept, never scored)",
            markup=False,
        )


def _repo(project: Project, given: str | None, verb: str) -> str | None:
    repo = given or project.cfg.store.ledger_hub
    if repo:
        from gamut.hub import check_published

        check_published("[store] ledger_hub", repo, project.config_file)
    if not repo:
        err_console.print(
            f"no [store] ledger_hub in {project.config_file}: the ledger is the local folder "
            f"{project.ledger_path}; nothing to {verb}",
            markup=False,
        )
    return repo or None


@click.group()
def ledger() -> None:
    """The verdict ledger: sync it with its private dataset, merge another, verify it."""


@ledger.command()
@repo_option
@config_option
@handle_errors
def pull(repo: str | None, config_path: Path | None) -> None:
    """Download the shards the local ledger lacks and ingest those that check out.

    A corrupted, forged or foreign file is named and not ingested (exit 1). A key judged twice
    with different verdicts is no error: the verdict pushed first counts, the others are
    counted as duplicates kept aside.
    """
    from gamut.ledger_hub import pull as pull_shards

    project = get_project(config_path)
    repo_id = _repo(project, repo, "pull")
    if repo_id is None:
        return
    led = project.ledger
    with led.lock("gamut ledger pull"):
        report = pull_shards(led, repo_id)
    err_console.print(
        f"pulled {len(report.ingested)} new file(s) ({report.remote_shards} remote shard(s)) "
        f"from {repo_id}@{report.revision[:12]} into {led.root}",
        markup=False,
    )
    _duplicates(report.duplicates)
    if report.refused:
        fail(
            f"{len(report.refused)} remote file(s) were not ingested:",
            [str(p) for p in report.refused],
            limit=MAX_LISTED,
        )


@ledger.command()
@repo_option
@config_option
@handle_errors
def push(repo: str | None, config_path: Path | None) -> None:
    """Send the shards the dataset lacks, as one commit (none when it lacks none).

    Verdicts still in the working index (a run stopped before shipping them) are shipped into
    a shard first, and what the dataset has that this ledger lacks is pulled (checked), so that
    the verdicts pushed first count. Remote shards are never rewritten or deleted.
    """
    from gamut.ledger_hub import push as push_shards
    from scoring.judge.cache import VerdictCache

    project = get_project(config_path)
    repo_id = _repo(project, repo, "push")
    if repo_id is None:
        return
    led = project.ledger
    with led.lock("gamut ledger push"):
        if project.cache_path.is_file():
            with VerdictCache(project.cache_path, led) as cache:
                shipped = cache.flush()
            if shipped:
                err_console.print(f"shipped {len(shipped)} shard(s) from the working index")
        report = push_shards(led, repo_id)
    if report.compacted:
        err_console.print(f"compacted {report.compacted} small shard(s) first", markup=False)
    for p in report.refused[:MAX_LISTED]:
        err_console.print(f"not pulled: {p}", markup=False)
    if report.ingested:
        err_console.print(f"pulled {len(report.ingested)} new file(s) first", markup=False)
    _duplicates(report.duplicates)
    if report.commit_url is None:
        err_console.print(
            f"{repo_id} has every shard of {led.root} ({report.remote_shards}); no commit",
            markup=False,
        )
    else:
        retried = (
            f" (attempt {report.attempts}: another push landed first)"
            if report.attempts > 1
            else ""
        )
        err_console.print(
            f"pushed {len(report.sent)} new shard(s) to {repo_id}: {report.commit_url}{retried}",
            markup=False,
        )


@ledger.command()
@click.argument(
    "directory", type=click.Path(path_type=Path, file_okay=False, exists=True), metavar="DIR"
)
@config_option
@handle_errors
def merge(directory: Path, config_path: Path | None) -> None:
    """Merge the ledger folder DIR (same key scheme) into this one.

    A corrupted, forged or foreign file in DIR is named and nothing is merged. A key judged
    differently in the two counts once (pushed first, then older); the other is kept aside.
    """
    from scoring.ledger import Ledger
    from scoring.ledger import merge as merge_ledgers

    project = get_project(config_path)
    led = project.ledger
    other = Ledger.open(directory, led.scheme, held=led.held, create=False)
    with led.lock("gamut ledger merge"):
        report = merge_ledgers(led, other)
    err_console.print(
        f"merged {report.n_copied} shard(s) from {directory} into {led.root}", markup=False
    )
    for c in report.examples[:5]:
        err_console.print(f"  duplicate: {c}", markup=False)
    _duplicates(report.duplicates)


@ledger.command()
@config_option
@handle_errors
def compact(config_path: Path | None) -> None:
    """Rewrite runs of small pushed shards as few shards, every row (duplicates too) counting
    where it did. The small shards stay on the dataset and are removed here; the next push
    sends the new shards (push also compacts when the small shards pass a threshold)."""
    from scoring.ledger.compact import compact as compact_shards

    project = get_project(config_path)
    led = project.ledger
    with led.lock("gamut ledger compact"):
        report = compact_shards(led)
    if not report.n_replaced:
        err_console.print(
            f"{led.root}: no run of small pushed shards to compact (only pushed shards are)",
            markup=False,
        )
        return
    err_console.print(
        f"compacted {report.n_replaced} shard(s) into {report.n_written} in {led.root}",
        markup=False,
    )


@ledger.command()
@config_option
@handle_errors
def verify(config_path: Path | None) -> None:
    """Check every shard and push record of the ledger: its bytes against its name (held: its
    MAC under the ledger secret), its size, kind, key scheme and values. Exits 1 naming each
    problem; counts the duplicate verdicts kept aside (keys judged twice)."""
    from scoring.ledger import KINDS

    project = get_project(config_path)
    led = project.ledger
    problems = led.verify()
    if problems:
        fail(
            f"the ledger {led.root} has {len(problems)} problem(s):",
            [str(p) for p in problems],
            limit=MAX_LISTED,
        )
    n = sum(len(led.shard_names(k)) for k in KINDS)
    err_console.print(f"{led.root}: {n} shard(s), every one sound", markup=False)
    _duplicates(led.duplicates()[0])
