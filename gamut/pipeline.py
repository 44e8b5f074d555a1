"""The pipeline as library calls (judge, verdict table, score tables, site), each stage on one
:class:`~gamut.project.Project` so no input is read twice. ``gamut run`` is :func:`run`."""

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
    from scoring.judge.pairs import PairPlan
    from scoring.judge.progress import ProgressSink
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

    Batch-mode judges take one step or, with ``wait_s``, poll every ``poll_s`` seconds until
    done. ``collect_only``: collect what is in flight and ask again only what collecting asks
    again (the unattended collector's mode). Raises ProblemsError (bad judges, keys or inputs)
    before any call.
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
    """On a judge's new model snapshot: say so, judge the calibration subset under it and record
    it in :data:`SNAPSHOTS`."""
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
    """Per judge whose verdicts name two snapshots: plan, change, calibration plan and rows."""
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
    """The ``judge_drift`` rows: each re-snapshotted judge's two snapshots compared."""
    if not (seen := _snapshots_seen(project)):  # no judge built, no pair planned, no import
        return []
    from scoring.tables.drift import drift_row

    named = [j.name for j in project.judges(need_keys=False) if j.identity in seen]
    sc, plans = project.cfg.scoring, project.pair_plans(named, submissions) if named else []
    return [
        drift_row(p, cal, rows, project.ledger, change, sc.partial_credit, sc.contradiction_penalty)
        for p, change, cal, rows in _calibrations(project, plans)
    ]


def private_folder(project: Project, out_dir: Path) -> None:
    """Refuse ``out_dir`` for held check text when it is inside the results, the site, the
    submissions, ``site_src`` or a git work tree (the private store excepted)."""
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
        tree = next((d for d in (out, *out.parents) if (d / ".git").exists()), None)
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
    """Write the requests without a verdict as OpenAI batch files (``vllm run-batch`` input);
    returns judge -> file -> requests. Held rubrics: a private folder, files 0600 in 0700."""
    from scoring.judge.batch.files import export_batch as export

    held = not project.rubrics_public
    if held:
        private_folder(project, out_dir)
    plans = project.pair_plans(judges, submissions, settings)
    return export(plans, project.ledger, project.cache_path, out_dir, private=held)


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
    """Write the verdict table (and beside it the usage table, same fingerprint) unless it is
    current; returns its path. A recorded run fingerprint (:mod:`gamut.runs`) skips even the
    pair planning."""
    from gamut import runs
    from scoring.judge.table import table_fingerprint, table_is_current, write_verdict_parts
    from scoring.judge.usage import usage_path, write_usage_table

    out = project.verdict_table
    run_fp = runs.fingerprint(project, "table", submissions=submissions)
    if runs.table_is_recorded(project, run_fp, out, submissions):
        return out
    plans = project.pair_plans(submissions=submissions)
    fp = table_fingerprint(plans, project.ledger, public=project.rubrics_public, judge_ids=False)
    if not table_is_current(out, fp):
        write_verdict_parts(
            plans,
            project.ledger,
            out,
            public=project.rubrics_public,
            rubric_version=project.check_table.rubric_version,
            fingerprint=fp,
            usage_out=usage_path(out),  # the calls and tokens of the same verdicts
        )
    elif not table_is_current(usage_path(out), fp):  # a results folder from before it
        write_usage_table(plans, project.ledger, usage_path(out), fp)
    runs.record_table(project, run_fp, fp, submissions)
    return out


def score(project: Project, submissions: list[str] | None = None) -> Tables:
    """Compute and write the score tables of ``submissions`` (default: all), and the files the
    site publishes from the verdict table and the responses (:mod:`generator.published`)."""
    from gamut.benchmark_version import benchmark_version
    from generator.published import publish_site_data
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
    tables = build_tables(
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
    public, root = project.rubrics_public, project.submissions_root
    publish_site_data(project.results, project.questions_path, root, public)
    return tables


def audit_labels(project: Project, inputs: Inputs) -> AuditLabels | None:
    """The human audit labels, checked against what is scored (None: no audit)."""
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
    """Validate submission folders (default: all). ``errors_only``: no gaming warnings;
    ``shown_from``: what problem file names are relative to (default: the config's folder,
    which the workflows' annotations need)."""
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
    """Build the site from the score tables (unless nothing changed and not ``force``: then
    ``unchanged(folder)``); returns the site folder."""
    import generator

    return generator.build_site(project.site_spec(), force=force, unchanged=unchanged)


@dataclass(frozen=True)
class RunResult:
    """What one run produced; ``left_out``: submissions that failed validation."""

    report: JudgeReport
    verdicts: Path
    tables: Tables
    site: Path | None
    left_out: tuple[str, ...] = ()


def publishable(project: Project) -> tuple[list[str], ValidationReport]:
    """The submissions that pass validation, and the validator's report on all of them."""
    from scoring.judge import list_submissions

    report = validate(project, errors_only=True)  # warnings leave nothing out
    rejected = set(report.rejected)
    keep = [s for s in list_submissions(project.submissions_root) if s not in rejected]
    return keep, report


@dataclass(frozen=True)
class Selection:
    """The submissions a command works on (``ids``), every valid one (``valid``: what the
    verdict table holds) and the validator's report."""

    ids: list[str]
    valid: list[str]
    validation: ValidationReport

    @property
    def left_out(self) -> tuple[str, ...]:
        """The submissions that fail validation."""
        return tuple(sorted(self.validation.rejected))


def select(project: Project, named: list[str] | None = None) -> Selection:
    """Validate every submission, then choose ``named`` (default: every valid one).

    Raises ProblemsError, listing its folder's errors, when a named submission fails validation.
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


def run(
    project: Project,
    *,
    site: bool = True,
    force_site: bool = False,
    progress: ProgressSink | None = None,
    notify: Callable[[str, object], None] | None = None,
) -> RunResult:
    """The main job: validate, judge what has no verdict yet, write the verdict table, score,
    build the site. Invalid submissions are left out; judge failures leave theirs incomplete.
    ``notify(stage, result)`` follows each stage (validated, judged, verdicts, scored, site, or
    site unchanged)."""
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
    return RunResult(report, verdicts, tables, out, tuple(sorted(validation.rejected)))
