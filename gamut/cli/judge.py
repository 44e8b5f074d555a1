"""``gamut judge`` and ``gamut export verdicts``: the LLM judge's command line."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gamut.cli._common import (
    config_option,
    err_console,
    fail,
    fail_left_out,
    handle_errors,
    list_left_out,
    note_left_out,
    out_console,
)
from gamut.config import load_config
from gamut.project import Project
from scoring.questions import Setting
from scoring.storage import atomic_write_text

if TYPE_CHECKING:
    from gamut.pipeline import Selection
    from scoring.judge import JudgeStats
    from scoring.judge.outcome import Failure

#: Failures listed one by one before the rest are only counted.
MAX_LISTED = 50
#: Exit status while batches are in flight and nothing failed (EX_TEMPFAIL: come back later).
EXIT_IN_FLIGHT = 75
#: A listed failure is cut here (a provider error message may quote the request).
MAX_CHARS = 300


@click.command()
@click.option(
    "--judge",
    "judges",
    multiple=True,
    metavar="NAME",
    help="Judge to run (repeatable; default: every judge in the config).",
)
@click.option(
    "--submission",
    "submissions",
    multiple=True,
    metavar="ID",
    help="Submission to judge (repeatable; default: every submission that passes validation). "
    "One that fails validation stops the command, nothing judged.",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    type=click.Choice([s.value for s in Setting]),
    help="Setting to judge (repeatable; default: both).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Count the calls that would be made, estimate their tokens and their cost in direct "
    "and in batch mode (from the configured prices); call nothing.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Direct mode: stop starting calls after this long; the rest wait for the next run.",
)
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Batch mode: poll until every batch is collected, for at most this long.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Batch mode: seconds between polls with --wait.",
)
@click.option(
    "--collect-only",
    is_flag=True,
    help="Batch mode: collect the batches in flight and ask again only what they ask again "
    "(unusable replies, expired or missing results); submit no first ask and make no direct "
    "call. What an unattended collector runs: it finishes what an approved run started.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Only the preflight: one request per judge on a fixed public check shows that it "
    "returns a usable verdict (a run does this first and stops a judge that does not); judge "
    "nothing.",
)
@click.option(
    "--export-batch",
    "export_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    metavar="DIR",
    help="Write the requests without a verdict as OpenAI batch files (what `vllm run-batch` "
    "reads) into DIR; call nothing.",
)
@click.option(
    "--import-batch",
    "import_files",
    is_flag=True,
    help="Ingest the result files given as arguments (`vllm run-batch` output).",
)
@click.option(
    "--status-out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write per-submission progress (checks, done, in flight, failed) as JSON.",
)
@click.argument("files", nargs=-1, type=click.Path(path_type=Path, dir_okay=False, exists=True))
@config_option
@handle_errors
def judge(
    judges: tuple[str, ...],
    submissions: tuple[str, ...],
    settings: tuple[str, ...],
    dry_run: bool,
    deadline: float | None,
    wait: float | None,
    poll: float,
    collect_only: bool,
    check: bool,
    export_dir: Path | None,
    import_files: bool,
    status_out: Path | None,
    files: tuple[Path, ...],
    config_path: Path | None,
) -> None:
    """Judge every (response, check) that has no verdict yet, then write the verdict table.

    Submissions that fail validation are left out (listed); a --submission that fails stops the
    command before anything is judged. Direct-mode verdicts are kept as they arrive; batch-mode
    judges collect finished batches and submit the rest: run again, or pass --wait, until it
    exits 0. One run at a time per ledger.

    Exit status: 0 when every check has a verdict; 1 when a check failed (listed; retried by the
    next run) or a submission was left out (this wins over 75); 75 while batches are in flight.
    """
    from gamut import pipeline

    names = list(judges) or None
    mode = _mode(
        check=check,
        dry_run=dry_run,
        collect_only=collect_only,
        export=export_dir is not None,
        import_files=import_files,
        files=bool(files),
        narrowed=bool(submissions or settings),
    )
    offline = mode not in (Mode.JUDGE, Mode.CHECK)
    project = Project(load_config(config_path, require_keys=False if offline else (names or True)))
    if mode is Mode.CHECK:
        _check(project, names)
        return
    chosen = pipeline.select(project, list(submissions) or None)
    list_left_out(chosen.validation, "not judged")
    sets = [Setting(s) for s in settings] or None
    if mode is Mode.EXPORT:
        assert export_dir is not None
        _export(project, chosen, export_dir, names, sets)
        return
    if mode is Mode.IMPORT:
        _import(project, chosen, list(files), names, status_out)
        return
    _judge(project, chosen, names, sets, mode, deadline, wait, poll, collect_only, status_out)


def _judge(
    project: Project,
    chosen: Selection,
    names: list[str] | None,
    sets: list[Setting] | None,
    mode: Mode,
    deadline: float | None,
    wait: float | None,
    poll: float,
    collect_only: bool,
    status_out: Path | None,
) -> None:
    """Judge (or count) what has no verdict, write the verdict table, exit with the status."""
    from gamut import pipeline

    report = pipeline.judge(
        project,
        names,
        chosen.ids,
        sets,
        dry_run=mode is Mode.DRY_RUN,
        deadline_s=deadline,
        wait_s=wait,
        poll_s=poll,
        collect_only=collect_only,
    )
    for note in report.notes:
        err_console.print(f"note: {note}", markup=False)
    for line in report.summary_lines():
        out_console.print(line)
    if mode is Mode.DRY_RUN:
        total = sum(s.planned for s in report.judges.values() if s.mode != "offline")
        n_offline = sum(s.planned for s in report.judges.values() if s.mode == "offline")
        also = f" ({n_offline} verdict(s) would be given offline)" if n_offline else ""
        out_console.print(
            f"dry run: {total} call(s) would be made{also}; nothing was called", markup=False
        )
        _exit([], status_out, project, chosen)
        return
    path = pipeline.write_verdicts(project, chosen.valid)
    out_console.print(f"verdict table: {path}")
    _exit(list(report.judges.values()), status_out, project, chosen, report.stopped)


class Mode(StrEnum):
    """What one ``gamut judge`` does."""

    JUDGE = "judge"
    CHECK = "--check"
    DRY_RUN = "--dry-run"
    EXPORT = "--export-batch"
    IMPORT = "--import-batch"


def _mode(
    *,
    check: bool = False,
    dry_run: bool,
    collect_only: bool,
    export: bool,
    import_files: bool,
    files: bool,
    narrowed: bool,
) -> Mode:
    """The mode the options ask for; a usage error naming every option that does not fit it."""
    chosen = [
        m
        for m, on in (
            (Mode.CHECK, check),
            (Mode.DRY_RUN, dry_run),
            (Mode.EXPORT, export),
            (Mode.IMPORT, import_files),
        )
        if on
    ]
    problems = []
    if len(chosen) > 1:
        problems.append(f"{' and '.join(chosen)} exclude each other: give one")
    mode = chosen[0] if len(chosen) == 1 else Mode.JUDGE
    if files and Mode.IMPORT not in chosen:
        problems.append("result files are given only with --import-batch")
    if Mode.IMPORT in chosen and not files:
        problems.append("--import-batch needs the result FILE(s) to ingest")
    if collect_only and {Mode.CHECK, Mode.EXPORT, Mode.IMPORT} & set(chosen):
        problems.append("--collect-only works on provider batches: drop it here")
    if Mode.CHECK in chosen and narrowed:
        problems.append("--check asks about a fixed public check: drop --submission/--setting")
    if Mode.IMPORT in chosen and narrowed:
        problems.append("--import-batch reads the ids from the files; drop --submission/--setting")
    if problems:
        raise click.UsageError("; ".join(problems))
    return mode


def _check(project: Project, names: list[str] | None) -> None:
    """--check: the preflight of the named judges alone; exit 1 when one fails."""
    from scoring.judge.preflight import preflight

    checked = preflight(project.judges(names, need_keys=True))
    for c in checked.values():
        (out_console if c.ok else err_console).print(str(c), markup=False)
    if not checked:
        out_console.print("no judge calls out (or every one has preflight = false)")
    failed = [c for c in checked.values() if not c.ok]
    if failed:
        fail(f"{len(failed)} judge(s) return no usable verdict (above)", label=None)


def _export(
    project: Project,
    chosen: Selection,
    out: Path,
    names: list[str] | None,
    sets: list[Setting] | None,
) -> None:
    """--export-batch: the requests without a verdict, as batch files in ``out``."""
    from gamut import pipeline

    written = pipeline.export_batch(project, out, names, chosen.ids, sets)
    for name, paths in written.items():
        n = sum(paths.values())
        out_console.print(f"{name}: {n} request(s) in {len(paths)} file(s)", markup=False)
        for path in paths:
            out_console.print(f"  {path}", markup=False)
    _exit([], None, project, chosen)


def _import(
    project: Project,
    chosen: Selection,
    files: list[Path],
    names: list[str] | None,
    status_out: Path | None,
) -> None:
    """--import-batch: ingest result files, then write the verdict table."""
    from gamut import pipeline
    from scoring.judge.batch.files import import_batch

    plans = project.pair_plans(names, chosen.ids)
    imported = import_batch(files, plans, project.ledger, project.cache_path)
    for s in imported.stats.values():
        out_console.print(
            f"{s.judge}: {s.judged} verdict(s) ingested, {s.reasks} unusable repl(ies) to "
            f"ask again, {s.resubmitted} server error(s) to ask again, "
            f"{len(s.failures)} failed",
            markup=False,
        )
    if imported.skipped:  # counted over every judge: said once
        out_console.print(
            f"{imported.skipped} result(s) already ingested (by an earlier import or run)",
            markup=False,
        )
    verdicts = pipeline.write_verdicts(project, chosen.valid)
    out_console.print(f"verdict table: {verdicts}", markup=False)
    for p in imported.fruitless:  # a file that gave nothing is an error, whatever else
        err_console.print(f"error: {p}", markup=False)
    _exit(list(imported.stats.values()), status_out, project, chosen)
    if imported.fruitless:
        fail(f"{len(imported.fruitless)} result file(s) gave nothing to ingest (listed above)")


def _exit(
    stats: list[JudgeStats],
    status_out: Path | None,
    project: Project,
    chosen: Selection,
    stopped: dict[str, str] | None = None,
) -> None:
    """Write the status file, then exit 1 when a judge was stopped, checks failed or submissions
    were left out, or 75 while batches are in flight and nothing else is wrong."""
    if status_out is not None:
        from scoring.judge.status import judging_status

        plans = project.pair_plans(None, chosen.ids)
        status = judging_status(plans, project.ledger, project.cache_path)
        atomic_write_text(status_out, status.to_json())
    if stopped:
        fail(
            f"{len(stopped)} judge(s) stopped before judging (above; nothing of theirs was "
            "asked): change the config key named and run again"
        )
    failures = [f for s in stats for f in s.failures]
    unfinished = sum(s.unfinished for s in stats)
    in_flight = sum(s.in_flight for s in stats)
    if failures or unfinished:
        listed = [f for f in failures if not replay_miss(project, f)]
        note_left_out(chosen.left_out)
        retry = (
            "run `gamut judge` again to retry them"
            if listed or unfinished
            else "a replay judge cannot retry them"
        )
        fail(
            f"{len(failures)} check(s) failed, {unfinished} not attempted; {retry}:",
            # One line per replay judge and submission it lacks; then each other failure (ids,
            # kind and the provider's message; never the reply).
            [*replay_gaps(project, failures), *(str(f) for f in listed)],
            limit=MAX_LISTED,
            width=None if not listed else MAX_CHARS,
        )
    waiting = (
        f"{in_flight} request(s) still in flight in provider batches; run `gamut judge` "
        "again later (or pass --wait SECONDS) to collect them"
    )
    if chosen.left_out:
        if in_flight:
            err_console.print(waiting, markup=False)
        # a submission that fails validation does not pass by waiting: 1, not 75
        fail_left_out(chosen.left_out, "the rest is judged")
    if in_flight:
        fail(waiting, code=EXIT_IN_FLIGHT, label=None)


def replay_miss(project: Project, f: Failure) -> bool:
    """Whether ``f`` is a replay judge's request its file holds no verdict for."""
    judge = project.cfg.judges.get(f.judge)
    return judge is not None and judge.replay is not None and f.kind == "rejected"


def replay_gaps(project: Project, failures: list[Failure]) -> list[str]:
    """One line per (replay judge, submission) whose replay file lacks verdicts, not per check."""
    missed = Counter((f.judge, f.submission_id) for f in failures if replay_miss(project, f))
    if not missed:
        return []
    total = Counter(
        (name, u.submission_id)
        for u in project.units([sid for _, sid in missed]).units
        if u.response.strip()  # an empty response is scored without the judge
        for name in {n for n, _ in missed}
        for _ in u.checks
    )
    lines = []
    for (name, sid), n in sorted(missed.items()):
        judge = project.cfg.judges[name]
        if n >= total[(name, sid)]:
            what = f"knows none of the {n:,} checks of submission {sid!r}"
        else:
            what = f"has no stored verdict for {n:,} checks of submission {sid!r}"
        lines.append(
            f"replay judge {name!r} ({judge.replay}) {what}: a replay judge only repeats the "
            "verdicts stored for the submissions it was made for; judge a new submission with "
            "a real judge (the live gamut.toml), or, to rehearse offline, give the judge "
            'unrecorded = "offline-match" (as demo/gamut.toml does)'
        )
    return lines


@click.group()
def export() -> None:
    """Export engine data for analysis."""


@export.command("verdicts")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Output file; the format follows the extension (.parquet, .csv or .jsonl).",
)
@config_option
@handle_errors
def export_verdicts_cmd(out: Path, config_path: Path | None) -> None:
    """Write every verdict of the current submissions and rubrics to a file.

    Columns: those of the site's and the Hub's verdict files: submission_id, setting, judge,
    judge_id, question_id, domain, check_id, kind, tier, secondary, verdict; plus rationale and
    check_text only when rubrics are public.
    """
    from gamut import pipeline
    from scoring.judge import export_verdicts

    project = Project(load_config(config_path))
    table = pipeline.verdict_table(project, judge_ids=True)
    domains = {q.question_id: q.domain for q in project.questions}
    table["domain"] = table["question_id"].astype(str).map(domains)
    n = export_verdicts(table, out, _export_provenance(project))
    err_console.print(f"wrote {n} verdict(s) to {out}")


def _export_provenance(project: Project) -> dict[str, object]:
    """What an exported verdict file was made from (scoring-independent provenance keys)."""
    from scoring import __version__
    from scoring.tables.write import generated_at

    return {
        "rubric_version": project.check_table.rubric_version,
        "rubrics_public": project.rubrics_public,
        "judges": project.judge_provenance(),
        "primary_judge": project.cfg.primary_judge,
        "engine_version": __version__,
        "generated_at": generated_at(),
    }
