"""The pipeline as library calls: judge, verdict table, score tables, site.

Each stage takes a :class:`~gamut.project.Project`, so inputs read by one stage (questions, rubrics,
responses, judges) are not read again by the next. ``gamut run`` is :func:`run`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.project import Project
from scoring.errors import GamutError
from scoring.questions import Setting

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

    from scoring.audit import AuditLabels
    from scoring.judge import JudgeReport
    from scoring.judge.batch.files import ImportReport
    from scoring.judge.pairs import PairPlan
    from scoring.judge.progress import ProgressSink
    from scoring.judge.status import JudgingStatus
    from scoring.submissions import Limits, ValidationReport
    from scoring.tables import Inputs, Tables
    from scoring.tables.drift import SnapshotChange

    Calibration = tuple[PairPlan, SnapshotChange, PairPlan, npt.NDArray[np.int64]]


def judge(
    project: Project,
    judges: list[str] | None = None,
    submissions: list[str] | None = None,
    settings: list[Setting] | None = None,
    *,
    dry_run: bool = False,
    progress: ProgressSink | None = None,
    deadline_s: float | None = None,
    wait_s: float | None = None,
    poll_s: float = 60.0,
    collect_only: bool = False,
) -> JudgeReport:
    """Judge every (response, check) of the selection that has no verdict yet.

    Batch-mode judges take one step (collect finished batches, submit the rest) or, with
    ``wait_s``, poll every ``poll_s`` seconds until done; their batches are recorded in the
    ledger. ``collect_only``: collect what is in flight and ask again only what collecting
    asks again; no first ask, no direct call (the unattended collector's mode).

    Raises:
        ProblemsError: no judges, unknown judge names or missing API keys, before any call.
        ProblemsError: unreadable questions, rubrics or responses.
    """
    from gamut import runs
    from gamut.progress import default_progress
    from scoring.judge import judge_all

    if not dry_run:
        project.judges(judges, need_keys=True)  # missing API keys are named, as on a full run
        fp = runs.fingerprint(project, "judge", judges, submissions, settings)
        done = runs.recorded_report(project, fp, judges, submissions, settings)
        if done is not None:
            return done
    plans = project.pair_plans(judges, submissions, settings, need_keys=not dry_run)
    stopped: dict[str, str] = {}
    if not dry_run and not collect_only:
        from scoring.judge.preflight import preflight

        checked = preflight([p.judge for p in plans])
        stopped = {n: str(c) for n, c in checked.items() if not c.ok}
        plans = [p for p in plans if p.judge.name not in stopped]
    report = judge_all(
        plans,
        project.ledger,
        project.cache_path,
        dry_run,
        progress=progress or (None if dry_run else default_progress()),
        deadline_s=deadline_s,
        wait_s=wait_s,
        poll_s=poll_s,
        collect_only=collect_only,
    )
    report.stopped.update(stopped)
    if not dry_run:
        _snapshot_drift(project, plans, report)
        after = runs.fingerprint(project, "judge", judges, submissions, settings)
        runs.record_report(project, after, report, judges, submissions, settings)
    return report


#: Judge identity -> the latest model snapshot announced, under the private store.
SNAPSHOTS = Path("runs") / "snapshots.json"


def _snapshot_drift(project: Project, plans: list[PairPlan], report: JudgeReport) -> None:
    """Say when a judge's provider reports a new model snapshot, judge the calibration subset
    under it, and record the judge in :data:`SNAPSHOTS` (for :func:`snapshot_drift`)."""
    import json

    from gamut.progress import plain_progress
    from scoring.judge import judge_all
    from scoring.storage import atomic_write_text

    judged = [p for p in plans if report.judges[p.judge.name].judged and p.judge.backend.calls_out]
    if not judged:
        return
    seen = _snapshots_seen(project)
    for p, change, cal, _pairs in _calibrations(project, judged):
        if seen.get(change.identity) != change.new:
            report.notes.append(str(change))
            seen[change.identity] = change.new
        cal_report = judge_all([cal], project.ledger, project.cache_path, progress=plain_progress())
        report.notes.extend(cal_report.notes)
        report.judges[p.judge.name].failures.extend(cal_report.failures)
    atomic_write_text(project.private / SNAPSHOTS, json.dumps(seen, indent=1) + "\n")


def _calibrations(project: Project, plans: list[PairPlan]) -> Iterator[Calibration]:
    """Each judge of ``plans`` whose verdicts name two snapshots: its plan, the change, the
    calibration plan and the calibration pairs' rows in its plan."""
    from scoring.tables import drift as dr

    for p in plans:
        change = dr.snapshot_change(project.ledger, p.judge)
        if change is not None:
            yield p, change, *dr.calibration_plan(p, project.ledger, change, project.key_scheme)


def _snapshots_seen(project: Project) -> dict[str, str]:
    """:data:`SNAPSHOTS` (empty when missing or unreadable)."""
    import json

    path = project.private / SNAPSHOTS
    try:
        seen = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        seen = {}
    return seen if isinstance(seen, dict) else {}


def snapshot_drift(project: Project, submissions: list[str] | None = None) -> list[dict[str, Any]]:
    """The ``judge_drift`` table's rows: each judge whose provider announced a new model
    snapshot, its two snapshots compared on the calibration pairs both judged."""
    from scoring.tables.drift import drift_row

    seen = _snapshots_seen(project)  # no judge built, no pair planned, while it is empty
    named = [j.name for j in project.judges(need_keys=False) if j.identity in seen] if seen else []
    sc, plans = project.cfg.scoring, project.pair_plans(named, submissions) if named else []
    return [
        drift_row(p, cal, rows, project.ledger, change, sc.partial_credit, sc.contradiction_penalty)
        for p, change, cal, rows in _calibrations(project, plans)
    ]


def _in_work_tree(path: Path) -> Path | None:
    """The git work tree ``path`` is in (a folder holding ``.git``, a folder or a worktree's
    file), if any."""
    for d in (path, *path.parents):
        if (d / ".git").exists():
            return d
    return None


def private_folder(project: Project, out_dir: Path) -> None:
    """Refuse ``out_dir`` for files holding held check text when it is in anything published or
    committed: the results, the site, the submissions, ``site_src`` or a git work tree (the
    private store ``[store] private`` excepted, which is never published).

    Raises:
        GamutError: naming the folder and the fix.
    """
    out = out_dir.resolve()
    private = project.private.resolve()
    published = {
        "the results folder": project.results,
        "the site folder": project.site_out,
        "the submissions folder": project.submissions_root,
        "site_src": project.cfg.root / "site_src",
    }
    where = next(
        (f"{what} ({p})" for what, p in published.items() if out.is_relative_to(p.resolve())),
        None,
    )
    if where is None and not out.is_relative_to(private):
        tree = _in_work_tree(out)
        where = None if tree is None else f"the git work tree {tree}"
    if where is not None:
        raise GamutError(
            f"--export-batch {out_dir}: the request files hold the check text of held rubrics, "
            f"and this folder is inside {where}, which is published or committed; give a folder "
            f"outside the repository, or under the private store, e.g. {private / 'batch'}"
        )


def export_batch(
    project: Project,
    out_dir: Path,
    judges: list[str] | None = None,
    submissions: list[str] | None = None,
    settings: list[Setting] | None = None,
) -> dict[str, dict[Path, int]]:
    """Write the requests of every (response, check) without a verdict as OpenAI batch files
    (what ``vllm run-batch`` reads); returns judge name -> each file and its requests.

    With held rubrics the folder must be private (:func:`private_folder`), and the files are
    written 0600 in a 0700 folder.

    Raises:
        GamutError: held rubrics, and ``out_dir`` is published or committed.
    """
    from scoring.judge.batch.files import export_batch as export

    held = not project.rubrics_public
    if held:
        private_folder(project, out_dir)
    plans = project.pair_plans(judges, submissions, settings)
    return export(plans, project.ledger, project.cache_path, out_dir, private=held)


def import_batch(
    project: Project,
    files: list[Path],
    judges: list[str] | None = None,
    submissions: list[str] | None = None,
) -> ImportReport:
    """Ingest ``vllm run-batch`` output files for every setting of the submissions given
    (default: every current submission).

    Raises:
        ProblemsError: some files were refused (the others are ingested), every problem listed.
    """
    from scoring.judge.batch.files import import_batch as ingest

    plans = project.pair_plans(judges, submissions)
    return ingest(files, plans, project.ledger, project.cache_path)


def judging_status(project: Project, submissions: list[str] | None = None) -> JudgingStatus:
    """Per submission: checks to judge, checks with a verdict, requests in flight, failures."""
    from scoring.judge.status import judging_status as status

    return status(project.pair_plans(None, submissions), project.ledger, project.cache_path)


def verdict_table(
    project: Project, *, judge_ids: bool = False, submissions: list[str] | None = None
) -> pd.DataFrame:
    """Every verdict in the ledger of the current submissions (or those named) and rubrics."""
    from scoring.judge import verdict_frame

    return verdict_frame(
        project.pair_plans(submissions=submissions),
        project.ledger,
        public=project.rubrics_public,
        judge_ids=judge_ids,
    )


def write_verdicts(project: Project, submissions: list[str] | None = None) -> Path:
    """Write the verdict table into the results folder, unless it is current; returns its path.

    Beside it, the usage table (:mod:`scoring.judge.usage`: the calls and tokens recorded with
    the same verdicts, which the leaderboard prices), under the same fingerprint.

    The table's metadata holds a fingerprint of its inputs (the pairs, their keys and the
    ledger's shards): when nothing changed, the file is left as it is. When a run fingerprint
    (:mod:`gamut.runs`) proves that no input file, ledger shard or index changed since the table
    was written, not even the pairs are planned. ``submissions``: the ids to include (default:
    every submission).
    """
    from gamut import runs
    from scoring.judge.table import table_fingerprint, table_is_current, write_verdict_parts
    from scoring.judge.usage import usage_path, write_usage_table

    out = project.verdict_table
    run_fp = runs.fingerprint(project, "table", submissions=submissions)
    if runs.table_is_recorded(project, run_fp, out, submissions):
        return out
    fp = table_fingerprint(
        project.pair_plans(submissions=submissions),
        project.ledger,
        public=project.rubrics_public,
        judge_ids=False,
    )
    if not table_is_current(out, fp):
        write_verdict_parts(
            project.pair_plans(submissions=submissions),
            project.ledger,
            out,
            public=project.rubrics_public,
            rubric_version=project.check_table.rubric_version,
            fingerprint=fp,
            usage_out=usage_path(out),  # the calls and tokens of the same verdicts
        )
    elif not table_is_current(usage_path(out), fp):  # a results folder from before it
        write_usage_table(
            project.pair_plans(submissions=submissions), project.ledger, usage_path(out), fp
        )
    runs.record_table(project, run_fp, fp, submissions)
    return out


def score(project: Project, submissions: list[str] | None = None) -> Tables:
    """Compute and write the score tables from the verdict table.

    ``submissions``: the ids to score (default: every submission in the folder).

    Raises:
        ProblemsError: an input file is invalid (every problem listed).
        GamutError: the verdict table is missing or inconsistent.
    """
    from gamut.benchmark_version import benchmark_version
    from scoring.judge.usage import usage_path
    from scoring.tables import build_tables, load_inputs
    from scoring.tables.cost import judging_cost, read_usage

    cfg = project.cfg
    cfg.require_judges()
    inputs = load_inputs(
        project.questions,
        project.check_table,
        project.submissions_root,
        tuple(cfg.judges),
        project.verdict_table,
        rubrics_source=cfg.benchmark.rubrics,
        only=submissions,
        digests=project.digests,
    )
    usage = read_usage(usage_path(project.verdict_table), project.verdict_table)
    return build_tables(
        inputs,
        cfg.scoring,
        project.judge_provenance(),
        primary_judge=cfg.primary_judge,
        rubrics_public=project.rubrics_public,
        out_dir=project.results,
        audit=audit_labels(project, inputs),
        audit_simulated=cfg.benchmark.audit_simulated,
        costs=judging_cost(usage, cfg.judges, inputs.submission_ids, inputs.judges),
        benchmark_version=benchmark_version(project),
        drift=snapshot_drift(project, submissions),
    )


def audit_labels(project: Project, inputs: Inputs) -> AuditLabels | None:
    """The human audit labels of the project checked against what is scored (None: no audit).

    Raises:
        ProblemsError: a label file has problems (every one, with file and line).
    """
    from scoring.audit import read_audit

    path = project.audit_path
    if path is None:
        return None
    present = {f.id for f in project.submissions.folders() if f.has_metadata()}
    return read_audit(
        path,
        submission_ids=inputs.submission_ids,
        has_responses=inputs.has_responses,
        question_ids=[q.question_id for q in inputs.questions],
        check_ids=inputs.check_ids,
        known_submissions=present,
    )


def validate(
    project: Project,
    paths: list[Path] | None = None,
    changed_from: str | None = None,
    *,
    limits: Limits | None = None,
    errors_only: bool = False,
    shown_from: Path | None = None,
) -> ValidationReport:
    """Validate submission folders of the project (every submission by default).

    ``errors_only``: report the errors only, not the gaming checks' warnings (see
    :func:`scoring.submissions.validate_submissions`). ``shown_from``: the folder that file
    names in problems are relative to (a person's working folder; default the config's folder,
    which the workflows' annotations need).

    Raises:
        ProblemsError: the questions file itself is invalid (a deployment problem).
    """
    from scoring.submissions import validate_submissions

    return validate_submissions(
        project.submissions_root,
        project.questions,
        paths,
        changed_from,
        base=project.cfg.root if shown_from is None else shown_from,
        limits=limits,
        digests=project.digests,
        errors_only=errors_only,
    )


def build_site(
    project: Project, *, force: bool = False, unchanged: Callable[[Path], None] | None = None
) -> Path:
    """Build the static site from the score tables (skipped, calling ``unchanged`` with the site
    folder, when nothing it reads changed since the last build, unless ``force``); returns the
    site folder."""
    import generator

    return generator.build_site(project.site_spec(), force=force, unchanged=unchanged)


@dataclass(frozen=True)
class RunResult:
    """What one run produced.

    Attributes:
        validation: the validator's report on every submission folder.
        left_out: the submissions that failed validation, so were neither judged nor published.
    """

    report: JudgeReport
    verdicts: Path
    tables: Tables
    site: Path | None
    validation: ValidationReport | None = None
    left_out: tuple[str, ...] = ()


def publishable(project: Project) -> tuple[list[str], ValidationReport]:
    """The submissions that pass validation, and the validator's errors on all of them.

    A folder the validator rejects (a bad name, metadata or response file) is left out; the
    others are judged and published as usual.
    """
    from scoring.judge import list_submissions

    report = validate(project, errors_only=True)  # warnings leave nothing out
    rejected = set(report.rejected)
    keep = [s for s in list_submissions(project.submissions_root) if s not in rejected]
    return keep, report


@dataclass(frozen=True)
class Selection:
    """The submissions a command works on, chosen after validating every submission.

    Attributes:
        ids: the submissions to work on: the ones named, else every valid one.
        valid: every submission that passes validation (what the verdict table holds).
        validation: the validator's report on every submission folder.
    """

    ids: list[str]
    valid: list[str]
    validation: ValidationReport

    @property
    def left_out(self) -> tuple[str, ...]:
        """The submissions that fail validation, so are neither judged nor scored."""
        return tuple(sorted(self.validation.rejected))


def select(project: Project, named: list[str] | None = None) -> Selection:
    """Validate every submission (:func:`publishable`), then choose the ones to work on.

    With no ``named`` ids, every valid submission is chosen and the rejected ones are left out,
    as in :func:`run`. Named ids are taken as they are (an unknown one is refused later, by the
    stage that reads it), unless the validator rejects one: then nothing is chosen.

    Raises:
        ProblemsError: a named submission fails validation; the errors in its folder listed.
    """
    from scoring.errors import ProblemsError
    from scoring.submissions.layout import display_path

    valid, report = publishable(project)
    if named is None:
        return Selection(valid, valid, report)
    bad = [s for s in dict.fromkeys(named) if s in report.rejected]
    if bad:
        folders = [display_path(project.submissions_root / s, project.cfg.root) for s in bad]
        errors = [
            p
            for p in report.errors
            if any(p.file == f or p.file.startswith(f + "/") for f in folders)
        ]
        raise ProblemsError(
            errors,
            f"submission(s) {', '.join(repr(s) for s in bad)} fail validation, so they are not "
            "judged (`gamut submission validate` lists every problem with its fix)",
        )
    return Selection(list(named), valid, report)


#: Stage names :func:`run` reports to its ``notify`` callback, with the stage's result.
STAGES = ("validated", "judged", "verdicts", "scored", "site")


def run(
    project: Project,
    *,
    site: bool = True,
    force_site: bool = False,
    progress: ProgressSink | None = None,
    notify: Callable[[str, object], None] | None = None,
) -> RunResult:
    """The main job: validate, judge what has no verdict yet, write the verdict table, score,
    build the site.

    A submission that fails validation is left out of every later stage (``left_out``; the
    validation report says why), and the others are published. Judge failures do not stop the
    run either: their submissions are incomplete (shown, not ranked), and the report lists them.

    Args:
        project: the deployment.
        site: also build the site.
        force_site: build the site even when nothing it reads changed since the last build.
        progress: where the judge's progress goes.
        notify: called after each stage with its name (one of :data:`STAGES`) and its result,
            and with ``site unchanged`` and the site folder when the site build is skipped.
    """
    say = notify or (lambda _stage, _result: None)
    keep, validation = publishable(project)
    say("validated", validation)
    report = judge(project, submissions=keep, progress=progress)
    say("judged", report)
    verdicts = write_verdicts(project, keep)
    say("verdicts", verdicts)
    tables = score(project, keep)
    say("scored", tables)
    unchanged = functools.partial(say, "site unchanged")
    out = build_site(project, force=force_site, unchanged=unchanged) if site else None
    if out is not None:
        say("site", out)
    return RunResult(report, verdicts, tables, out, validation, tuple(sorted(validation.rejected)))


__all__ = [
    "STAGES",
    "RunResult",
    "Selection",
    "build_site",
    "export_batch",
    "import_batch",
    "judge",
    "judging_status",
    "private_folder",
    "publishable",
    "run",
    "score",
    "select",
    "validate",
    "verdict_table",
    "write_verdicts",
]
