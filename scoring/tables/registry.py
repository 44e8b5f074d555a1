"""The score tables, in one list: what builds each, its label, and what the site reads of it
(docs/adding-a-score-table.md); columns are :data:`scoring.tables.columns.TABLES`'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.audit import AuditLabels
from scoring.tables import audit as _audit
from scoring.tables import judges as _judges
from scoring.tables import sensitivity as _sensitivity
from scoring.tables import tables as _tables
from scoring.tables.columns import TABLES
from scoring.tables.cost import COST_COLUMNS
from scoring.tables.pairwise import pairwise
from scoring.tables.scores import Scores
from scoring.tables.tables import SHARES, TIER_COLUMNS


@dataclass
class Built:
    """What a table is built from: the scores, judge name -> family, the audit labels, the judging
    costs per group (None: unknown), the ``judge_drift`` rows, and the tables built so far."""

    scores: Scores
    families: dict[str, str]
    audit: AuditLabels | None
    costs: dict[str, Any] | None = None
    drift: list[dict[str, object]] = field(default_factory=list)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    @cached_property
    def kappa(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The two kappa tables, computed together."""
        return _judges.kappa_tables(self.scores)

    @cached_property
    def labels(self) -> tuple[AuditLabels, npt.NDArray[np.int8]]:
        """The audit labels and their final verdicts (an empty set without labels)."""
        inputs = self.scores.inputs
        labels = self.audit
        if labels is None:
            labels = AuditLabels.empty(len(inputs.submission_ids) * 2, inputs.checks.size)
        return labels, labels.final()

    @cached_property
    def humans(self) -> _audit.HumanScores:
        """The question scores under the final human verdicts."""
        return _audit.human_scores(self.labels[1], self.scores)

    @cached_property
    def ppi(self) -> dict[str, npt.NDArray[np.float64]] | None:
        """The leaderboard's PPI columns (None without labels)."""
        return None if self.audit is None else _audit.ppi_columns(self.scores, self.humans)


@dataclass(frozen=True)
class ScoreTable:
    """One score table: its file name under ``<results>/`` (no extension), downloads-page title
    and builder (no I/O); ``site``: the columns the site reads (None: not read), or
    ``optional_site`` for a table it shows when present; ``downloads``: listed on the downloads
    page; ``large``: one row per question (Parquet only in ``<results>/``, gzipped CSV online)."""

    name: str
    label: str
    build: Callable[[Built], pd.DataFrame]
    site: tuple[str, ...] | None = None
    optional_site: tuple[str, ...] | None = None
    downloads: bool = True
    large: bool = False


#: The columns of a group, and a Gamut score with its interval.
_GROUP = ("submission_id", "setting", "judge")
_GAMUT = ("gamut", "gamut_lo", "gamut_hi")
#: The agreement figures the judges page shows, each with its interval.
_AGREEMENT_SITE = tuple(
    f"{f}{end}"
    for f in ("agreement", "kappa", "kappa_linear", "macro_f1")
    for end in ("", "_lo", "_hi")
)


#: Every score table, in the downloads page's order.
SCORE_TABLES: tuple[ScoreTable, ...] = (
    ScoreTable(
        "question_scores",
        "Question scores",
        lambda b: _tables.question_scores(b.scores),
        site=(*_GROUP, "question_id", "domain", "ac_raw", "v_raw", "c_raw", "gamut_raw"),
        large=True,
    ),
    ScoreTable(
        "leaderboard",
        "Leaderboard",
        lambda b: _tables.leaderboard(b.scores, b.ppi, b.costs),
        site=(
            *_GROUP,
            "primary",
            "status",
            "n_questions",
            *_GAMUT,
            *TIER_COLUMNS,
            *SHARES,
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
    ),
    ScoreTable(
        "by_domain",
        "Scores by domain",
        lambda b: _tables.breakdown(b.scores, "domain"),
        site=(*_GROUP, "domain", "n_questions", *_GAMUT, "rank", "tie_group"),
    ),
    ScoreTable(
        "by_popularity",
        "Scores by popularity bucket",
        lambda b: _tables.breakdown(b.scores, "popularity"),
        site=(*_GROUP, "popularity", *_GAMUT),
    ),
    ScoreTable(
        "by_egocentric",
        "Scores for egocentric and other photos",
        lambda b: _tables.breakdown(b.scores, "egocentric"),
        site=(*_GROUP, "egocentric", *_GAMUT),
    ),
    ScoreTable(
        "by_kind",
        "Verdicts by check kind",
        lambda b: _tables.by_kind(b.scores),
        site=(*_GROUP, "kind", "secondary", "n_checks", *SHARES, "score"),
    ),
    ScoreTable(
        "modality",
        "Multimodal vs text-only per model",
        lambda b: _tables.modality(b.scores),
        site=("submission_id", "judge", "multimodal", "text_only", "gap", "gap_lo", "gap_hi"),
    ),
    ScoreTable(
        "modality_summary",
        "Multimodal vs text-only summary",
        lambda b: _tables.modality_summary(b.scores, b.frames["modality"]),
    ),
    ScoreTable(
        "pairwise",
        "Pairwise model differences",
        lambda b: pairwise(b.scores),
        site=tuple(TABLES["pairwise"]),
    ),
    ScoreTable(
        "judge_scores",
        "Scores under each judge",
        lambda b: _judges.judge_scores(b.frames["leaderboard"]),
        site=(*_GROUP, *_GAMUT, "rank"),
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
        lambda b: b.kappa[0],
        site=tuple(TABLES["judge_kappa"]),
    ),
    ScoreTable(
        "judge_kappa_by_kind",
        "Judge verdict agreement by check kind (Cohen's kappa)",
        lambda b: b.kappa[1],
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
        site=tuple(c for c in TABLES["judge_self_preference"] if not c.startswith("n_")),
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
        optional_site=("setting", "submission_id", "judge", "rank", "rank_change"),
    ),
    ScoreTable(
        "min_detectable_difference",
        "Minimum detectable difference per board",
        lambda b: _sensitivity.min_detectable_difference(b.scores),
        optional_site=("setting", "judge", "board", "n_questions", "mdd"),
    ),
    ScoreTable(
        "judge_human",
        "Judge against the human audit",
        lambda b: _audit.judge_human(b.scores, b.labels[1]),
        optional_site=("setting", "judge", "kind", "n_checks", "leniency", *_AGREEMENT_SITE),
    ),
    ScoreTable(
        "judge_annotator",
        "Judge against each annotator",
        lambda b: _audit.judge_annotator(b.scores, b.labels[0]),
        optional_site=("setting", "judge", "kind", "n_checks", *_AGREEMENT_SITE),
    ),
    ScoreTable(
        "human_human",
        "Annotators against each other",
        lambda b: _audit.human_human(b.scores, b.labels[0]),
        optional_site=("setting", "kind", "n_checks", *_AGREEMENT_SITE),
    ),
    ScoreTable(
        "audit_incomplete",
        "Audited questions with incomplete human verdicts (left out of the correction)",
        lambda b: _audit.incomplete_audits(b.scores, *b.labels, b.humans),
        optional_site=("setting", "submission_id", "question_id", "n_checks", "n_final"),
    ),
    ScoreTable(
        "judge_drift",
        "Judge snapshot drift",
        lambda b: pd.DataFrame(b.drift, columns=list(TABLES["judge_drift"])),
        optional_site=tuple(TABLES["judge_drift"]),
    ),
    ScoreTable("incomplete", "Incomplete submissions", lambda b: _tables.incomplete(b.scores)),
)


def score_tables() -> tuple[ScoreTable, ...]:
    """The registered score tables, read when called (a test may register one for a while)."""
    return SCORE_TABLES


def site_tables(*, optional: bool) -> dict[str, tuple[str, ...]]:
    """The tables the site reads (``optional``: shows when present), with the columns it reads."""
    read = {t.name: t.optional_site if optional else t.site for t in score_tables()}
    return {name: columns for name, columns in read.items() if columns is not None}
