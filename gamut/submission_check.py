"""What the scoring will do with one submission, seen before the pull request; nothing is called:
validation, the statistics the gaming warnings look at, and the judge's dry run sizing the job
(with held rubrics only the maintainers can count checks, and the report says so)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gamut.project import Project
from scoring.errors import GamutError, Problem
from scoring.judge.spec import JudgeConfig
from scoring.questions import Setting
from scoring.submissions.formats import RESPONSE_FILES
from scoring.submissions.gaming import question_words
from scoring.submissions.layout import display_path
from scoring.submissions.stats import ResponseStats, response_stats

if TYPE_CHECKING:
    from scoring.judge import JudgeReport
    from scoring.submissions import ValidationReport


@dataclass
class SubmissionCheck:
    """The validation report, the statistics per setting and the judging job (or why not)."""

    submission_id: str
    validation: ValidationReport
    stats: dict[Setting, ResponseStats] = field(default_factory=dict)
    job: JudgeReport | None = None
    job_unavailable: str = ""
    judges: dict[str, JudgeConfig] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when validation found no error."""
        return self.validation.ok

    def lines(self) -> list[str]:
        """The report for the terminal (ids and numbers only; never rubric text)."""
        out = [str(p) for p in self.validation.errors + self.validation.warnings]
        out.append(self.validation.summary())
        out += ["", "Responses (the numbers the validator's warnings look at):"]
        for setting in Setting:
            numbers = self.stats.get(setting)
            out.append(f"  {setting.value}: {numbers.line() if numbers else 'no response file'}")
        out += ["", "Judging job (estimated; nothing was called):"]
        if self.job is None:
            out.append(f"  not sized: {self.job_unavailable}")
            return out
        total = 0.0
        priced = False
        for name, s in self.job.judges.items():
            cfg = self.judges.get(name)
            prices = cfg.prices(s.mode) if cfg else None
            # uncached: what the estimate can promise (the provider's prompt caching lowers it)
            cost = cfg.cost(s.mode, s.est_tokens_in, 0, s.est_tokens_out) if cfg else None
            if cost is not None:
                total += cost
                priced = True
            price = (
                f"about ${cost:,.2f} at ${prices[0]:g} in / ${prices[2]:g} out per million "
                f"tokens ({s.mode} mode)"
                if cost is not None and prices is not None
                else "no price configured"
            )
            primary = ", primary" if cfg is not None and cfg.primary else ""
            head = (
                f"  {name} ({s.label}{primary}): {s.checks:,} checks, {s.cache_hits:,} already "
                f"judged, {s.empty:,} of empty responses (scored without a call); "
            )
            if s.mode == "offline":
                matcher = (
                    ", else by the offline matcher" if cfg and cfg.unrecorded != "fail" else ""
                )
                tail = f"verdicts given offline (replayed{matcher}): no calls, no tokens, no cost"
            else:
                tail = f"calls, about {s.est_tokens_in:,} tokens in and {s.est_tokens_out:,} out; "
                tail += price
            out.append(f"{head}{s.planned:,} {tail}")
        if priced:
            out.append(
                f"  total: about ${total:,.2f} at the uncached input price (providers' prompt "
                "caching makes it less); the maintainers pay for judging, not you"
            )
        return out


def check_submission(project: Project, submission_id: str) -> SubmissionCheck:
    """Validate one submission, compute its response statistics and size its judging job."""
    from gamut import pipeline
    from scoring.submissions import Limits
    from scoring.submissions.responses import read_response_file

    folder = project.submissions_root / submission_id
    report = pipeline.validate(
        project, [Path(display_path(folder, Path.cwd()))], shown_from=Path.cwd()
    )
    result = SubmissionCheck(submission_id, report, judges=dict(project.cfg.judges))
    limits = Limits()
    qids = [q.question_id for q in project.questions]
    qwords = question_words(project.questions)
    for setting in Setting:
        path = folder / RESPONSE_FILES[setting.value]
        read = read_response_file(
            path, display_path(path, project.cfg.root), setting.value, qids, limits
        )
        if read.responses:
            texts = {q: r.text for q, r in read.responses.items()}
            result.stats[setting] = response_stats(texts, qwords)
    if not report.ok:
        result.job_unavailable = "fix the errors above first"
        return result
    if not project.cfg.judges:
        result.job_unavailable = f"{project.config_file} defines no judges"
        return result
    try:
        result.job = pipeline.judge(project, None, [submission_id], dry_run=True)
    except GamutError as exc:
        held = (
            ""
            if project.rubrics_public
            else " (the rubrics are held: only the maintainers can count the checks; the pull "
            "request's comment shows the result)"
        )
        result.job_unavailable = f"{exc}{held}"
    return result


def check_metadata_only(
    project: Project, paths: list[Path] | None
) -> tuple[list[str], list[Problem]]:
    """Check only each named (default: every) submission's ``submission.yaml``, for a config
    whose questions cannot be read yet; the ids checked and every problem found."""
    from scoring.submissions.formats import METADATA_FILE
    from scoring.submissions.layout import all_targets, targets_from_paths
    from scoring.submissions.metadata import check_metadata

    root, here = project.submissions_root, Path.cwd()
    if not root.is_dir():
        return [], []
    if paths:
        ids, everything, problems = targets_from_paths(root, paths, here)
        if everything:
            ids, more = all_targets(root, here)
            problems += more
    else:
        ids, problems = all_targets(root, here)
    for sid in ids:
        path = root / sid / METADATA_FILE
        shown = display_path(path, here)
        if not os.path.lexists(path):
            problems.append(
                Problem(shown, None, "missing", f"create it with `gamut submission new {sid}`")
            )
            continue
        problems += check_metadata(path, shown)[1]
    return ids, problems
