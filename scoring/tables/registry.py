"""The score tables, in one list: what builds each, its label, and what the site reads of it.

Every other list of tables derives from :data:`SCORE_TABLES`: the tables
:func:`scoring.tables.iter_frames` computes and writes (in this order), those written as Parquet
only, the site's required and optional tables (``generator/tables.py``) and the downloads page
(``generator/downloads.py``, in this order). Each table's columns, with their types and
meanings, are its entry of :data:`scoring.tables.columns.TABLES` (which also describes the
questions, responses and verdict tables, which are not computed from scores).
docs/adding-a-score-table.md says how to add one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from scoring.audit import AuditLabels
from scoring.tables import audit as _audit
from scoring.tables import judges as _judges
from scoring.tables import sensitivity as _sensitivity
from scoring.tables import tables as _tables
from scoring.tables.columns import TABLES
from scoring.tables.cost import COST_COLUMNS
from scoring.tables.pairwise import PAIRWISE_COLUMNS, pairwise
from scoring.tables.scores import Scores


@dataclass
class Built:
    """What a table is built from: the scores, the judges' families, the audit labels, the
    snapshot drift, and the tables built before it.

    Attributes:
        scores: from :func:`scoring.tables.scores.compute`.
        families: judge name -> the model family the judge belongs to.
        audit: the human audit labels, or None.
        audit_parts: the leaderboard's PPI columns and the final human verdicts (both None
            without labels).
        costs: the leaderboard's judging columns per group (:func:`scoring.tables.cost.
            judging_cost`), or None (empty columns).
        drift: the ``judge_drift`` rows (each judge whose model snapshot changed, compared on
            its calibration pairs; ``gamut.pipeline.snapshot_drift``).
        frames: the tables built so far, by name.
    """

    scores: Scores
    families: dict[str, str]
    audit: AuditLabels | None
    audit_parts: tuple[dict[str, Any] | None, Any]
    costs: dict[str, Any] | None = None
    drift: list[dict[str, object]] = field(default_factory=list)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    def table(self, name: str) -> pd.DataFrame:
        """A table built earlier (its registry entry comes first)."""
        return self.frames[name]

    @cached_property
    def kappa_figures(self) -> _judges.KappaFigures:
        """The kappa figures both kappa tables read (computed once)."""
        return _judges.kappa_figures(self.scores)

    @cached_property
    def labels(self) -> tuple[AuditLabels, Any]:
        """The audit labels and their final verdicts (an empty set without labels)."""
        if self.audit is not None:
            return self.audit, self.audit_parts[1]
        inputs = self.scores.inputs
        empty = AuditLabels.empty(len(inputs.submission_ids) * 2, inputs.checks.size)
        return empty, empty.final()


@dataclass(frozen=True)
class ScoreTable:
    """One score table.

    Attributes:
        name: the file name under ``<results>/`` without extension.
        label: its title on the site's downloads page.
        build: computes it (no I/O).
        site: the columns the site reads (None: the site does not read the table).
        site_optional: the site shows the table when present, and builds without it.
        downloads: listed on the downloads page (the leaderboard has a page section of its own).
        early: built on the pool beside the others, largest first; the rest are built in order
            on the calling thread once the early ones are done.
        large: one row per question: Parquet only in the results folder, gzipped CSV on the site.
    """

    name: str
    label: str
    build: Callable[[Built], pd.DataFrame]
    site: tuple[str, ...] | None = None
    site_optional: bool = False
    downloads: bool = True
    early: bool = False
    large: bool = False

    @property
    def columns(self) -> dict[str, tuple[str, str]]:
        """Column -> (Arrow type name, meaning), from :data:`scoring.tables.columns.TABLES`."""
        return TABLES[self.name]


#: The agreement figures the judges page shows, each with its interval.
_AGREEMENT_SITE = tuple(
    f"{f}{end}"
    for f in ("agreement", "kappa", "kappa_linear", "macro_f1")
    for end in ("", "_lo", "_hi")
)


def _judge_human(b: Built) -> pd.DataFrame:
    inputs, g = b.scores.inputs, b.scores.groups
    return _audit.judge_human(
        inputs.verdicts,
        b.scores.level.status,
        g.sub * 2 + g.setting,
        g.judge,
        inputs.judges,
        b.labels[1],
        inputs.checks,
        b.scores.weights,
        b.scores.config,
    )


def _judge_annotator(b: Built) -> pd.DataFrame:
    inputs = b.scores.inputs
    return _audit.judge_annotator(
        inputs.verdicts,
        b.scores.level.status,
        inputs.judges,
        b.labels[0],
        inputs.checks,
        b.scores.weights,
        b.scores.config,
    )


def _human_human(b: Built) -> pd.DataFrame:
    inputs = b.scores.inputs
    return _audit.human_human(b.labels[0], inputs.checks, b.scores.weights, b.scores.config)


def _audit_incomplete(b: Built) -> pd.DataFrame:
    inputs = b.scores.inputs
    labels, final = b.labels
    humans = _audit.human_scores(
        final, inputs.checks.question, inputs.checks.tier, len(inputs.questions), b.scores.config
    )
    return _audit.incomplete_audits(
        labels,
        humans,
        inputs.checks.question,
        list(inputs.submission_ids),
        [q.question_id for q in inputs.questions],
    )


def _breakdown(column: str) -> Callable[[Built], pd.DataFrame]:
    return lambda b: _tables.breakdown(b.scores, column)


#: Every score table, in the downloads page's order.
SCORE_TABLES: tuple[ScoreTable, ...] = (
    ScoreTable(
        "question_scores",
        "Question scores",
        lambda b: _tables.question_scores(b.scores),
        site=(
            "submission_id",
            "setting",
            "judge",
            "question_id",
            "domain",
            "ac_raw",
            "v_raw",
            "c_raw",
            "gamut_raw",
        ),
        early=True,
        large=True,
    ),
    ScoreTable(
        "leaderboard",
        "Leaderboard",
        lambda b: _tables.leaderboard(b.scores, b.audit_parts[0], b.costs),
        site=(
            "submission_id",
            "setting",
            "judge",
            "primary",
            "status",
            "n_questions",
            "gamut",
            "gamut_lo",
            "gamut_hi",
            "ac",
            "v",
            "c",
            "share_meets",
            "share_partial",
            "share_missing",
            "share_contradicts",
            "mean_response_chars",
            *COST_COLUMNS,
            "rank",
            "rank_lo",
            "rank_hi",
            "tie_group",
            "model_name",
            "organisation",
            "model_family",
            "open_weights",
            "parameters",
            "date",
            "link",
            "demo",
        ),
        downloads=False,
        early=True,
    ),
    ScoreTable(
        "by_domain",
        "Scores by domain",
        _breakdown("domain"),
        site=(
            "submission_id",
            "setting",
            "judge",
            "domain",
            "n_questions",
            "gamut",
            "gamut_lo",
            "gamut_hi",
            "rank",
            "tie_group",
        ),
        early=True,
    ),
    ScoreTable(
        "by_popularity",
        "Scores by popularity bucket",
        _breakdown("popularity"),
        site=("submission_id", "setting", "judge", "popularity", "gamut", "gamut_lo", "gamut_hi"),
        early=True,
    ),
    ScoreTable(
        "by_egocentric",
        "Scores for egocentric and other photos",
        _breakdown("egocentric"),
        site=("submission_id", "setting", "judge", "egocentric", "gamut", "gamut_lo", "gamut_hi"),
        early=True,
    ),
    ScoreTable(
        "by_kind",
        "Verdicts by check kind",
        lambda b: _tables.by_kind(b.scores),
        site=(
            "submission_id",
            "setting",
            "judge",
            "kind",
            "secondary",
            "n_checks",
            "share_meets",
            "share_partial",
            "share_missing",
            "share_contradicts",
            "score",
        ),
        early=True,
    ),
    ScoreTable(
        "modality",
        "Multimodal vs text-only per model",
        lambda b: _tables.modality(b.scores),
        site=("submission_id", "judge", "multimodal", "text_only", "gap", "gap_lo", "gap_hi"),
        early=True,
    ),
    ScoreTable(
        "modality_summary",
        "Multimodal vs text-only summary",
        lambda b: _tables.modality_summary(b.scores, b.table("modality")),
    ),
    ScoreTable(
        "pairwise",
        "Pairwise model differences",
        lambda b: pairwise(b.scores),
        site=PAIRWISE_COLUMNS,
        early=True,
    ),
    ScoreTable(
        "judge_scores",
        "Scores under each judge",
        lambda b: _judges.judge_scores(b.table("leaderboard")),
        site=("submission_id", "setting", "judge", "gamut", "gamut_lo", "gamut_hi", "rank"),
    ),
    ScoreTable(
        "judge_tau",
        "Judge ranking agreement (Kendall tau)",
        lambda b: _judges.judge_tau(b.scores),
        site=("setting", "judge_a", "judge_b", "tau_b", "max_abs_diff", "max_diff_submission"),
    ),
    ScoreTable(
        "judge_kappa",
        "Judge verdict agreement (Cohen's kappa)",
        lambda b: _judges.judge_kappa(b.scores, b.kappa_figures),
        site=tuple(TABLES["judge_kappa"]),
    ),
    ScoreTable(
        "judge_kappa_by_kind",
        "Judge verdict agreement by check kind (Cohen's kappa)",
        lambda b: _judges.judge_kappa_by_kind(b.scores, b.kappa_figures),
        site=tuple(TABLES["judge_kappa_by_kind"]),
    ),
    ScoreTable(
        "judge_leniency",
        "Judge leniency",
        lambda b: _judges.judge_leniency(b.scores),
        site=("setting", "judge", "offset", "offset_lo", "offset_hi"),
    ),
    ScoreTable(
        "judge_self_preference",
        "Judge self-preference",
        lambda b: _judges.judge_self_preference(b.scores, b.families),
        site=(
            "setting",
            "judge",
            "family",
            "own_score",
            "others_score_of_own",
            "own_minus_others",
            "other_families_diff",
            "self_preference",
            "self_preference_lo",
            "self_preference_hi",
            "self_preference_primary",
            "self_preference_primary_lo",
            "self_preference_primary_hi",
        ),
    ),
    ScoreTable(
        "judge_family_matrix",
        "Judge self-preference matrix (judge family x model family)",
        lambda b: _sensitivity.judge_family_matrix(b.scores, b.families),
    ),
    ScoreTable(
        "rank_sensitivity",
        "Each model's rank under every judge",
        lambda b: _sensitivity.rank_sensitivity(b.scores),
        site=("setting", "submission_id", "judge", "rank", "rank_change"),
        site_optional=True,
    ),
    ScoreTable(
        "min_detectable_difference",
        "Minimum detectable difference per board",
        lambda b: _sensitivity.min_detectable_difference(b.scores),
        site=("setting", "judge", "board", "n_questions", "mdd"),
        site_optional=True,
    ),
    ScoreTable(
        "judge_human",
        "Judge against the human audit",
        _judge_human,
        site=("setting", "judge", "kind", "n_checks", "leniency", *_AGREEMENT_SITE),
        site_optional=True,
    ),
    ScoreTable(
        "judge_annotator",
        "Judge against each annotator",
        _judge_annotator,
        site=("setting", "judge", "kind", "n_checks", *_AGREEMENT_SITE),
        site_optional=True,
    ),
    ScoreTable(
        "human_human",
        "Annotators against each other",
        _human_human,
        site=("setting", "kind", "n_checks", *_AGREEMENT_SITE),
        site_optional=True,
    ),
    ScoreTable(
        "audit_incomplete",
        "Audited questions with incomplete human verdicts (left out of the correction)",
        _audit_incomplete,
        site=("setting", "submission_id", "question_id", "n_checks", "n_final"),
        site_optional=True,
    ),
    ScoreTable(
        "judge_drift",
        "Judge snapshot drift",
        lambda b: pd.DataFrame(b.drift, columns=list(TABLES["judge_drift"])),
        site=tuple(TABLES["judge_drift"]),
        site_optional=True,
    ),
    ScoreTable("incomplete", "Incomplete submissions", lambda b: _tables.incomplete(b.scores)),
)


def score_tables() -> tuple[ScoreTable, ...]:
    """The registered score tables, read when called (a test may register one for a while)."""
    return SCORE_TABLES


def score_table(name: str) -> ScoreTable:
    """The registry entry of ``name``.

    Raises:
        KeyError: no score table has that name.
    """
    for table in score_tables():
        if table.name == name:
            return table
    raise KeyError(f"no score table {name!r} (scoring/tables/registry.py SCORE_TABLES)")


def site_tables(*, optional: bool) -> dict[str, tuple[str, ...]]:
    """The tables the site reads (``optional``: those it shows when present), with the columns
    it reads from each."""
    return {
        t.name: t.site for t in score_tables() if t.site is not None and t.site_optional == optional
    }


__all__ = ["SCORE_TABLES", "Built", "ScoreTable", "score_table", "score_tables", "site_tables"]
