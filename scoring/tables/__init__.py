"""The score tables (docs/contract.md §6 and §8): verdicts in, every table the leaderboard shows.

``load_inputs(...)`` reads the submissions and the verdict table against the questions and checks;
``build_tables(inputs, ...)`` checks completeness, scores, bootstraps over questions, and writes the
tables of ARCHITECTURE.md "The score tables" into a folder. No table holds rubric or check text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.audit import AuditLabels
from scoring.scorer import ScoringConfig
from scoring.tables import judges as _judges
from scoring.tables import sensitivity as _sensitivity
from scoring.tables import tables as _tables
from scoring.tables.columns import (
    SECONDARY_NOTE,
    TABLES,
    VERDICT_KEY,
    VERDICT_KEY_NOTE,
    arrow_type,
    dictionary,
    undocumented,
)
from scoring.tables.csvcells import neutralise, write_frame_csv, write_table_csv
from scoring.tables.judges import MIN_KIND_CHECKS
from scoring.tables.load import Inputs, load_inputs
from scoring.tables.pairwise import PAIRWISE_COLUMNS, pairwise
from scoring.tables.published import (
    RESPONSE_COLUMNS,
    judge_ids,
    response_table,
    submission_slices,
    verdict_table,
)
from scoring.tables.scores import Scores, compute
from scoring.tables.write import PROVENANCE_FILE, provenance, write_provenance, write_tables

#: Tables written as Parquet only (they are large); every other table also gets CSV and JSON.
PARQUET_ONLY = frozenset({"question_scores"})


@dataclass(frozen=True)
class Tables:
    """The score tables, as written under ``out_dir``.

    Attributes:
        frames: table name -> DataFrame (names as in ARCHITECTURE.md, without extension).
        provenance: what produced them (also in ``provenance.json`` and every Parquet file).
        out_dir: the results folder.
        files: every file written.
    """

    frames: dict[str, pd.DataFrame]
    provenance: dict[str, Any]
    out_dir: Path
    files: list[Path] = field(default_factory=list)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.frames[name]

    @property
    def leaderboard(self) -> pd.DataFrame:
        """One row per (submission, setting, judge)."""
        return self.frames["leaderboard"]


def _audit_parts(scores: Scores, audit: AuditLabels | None) -> tuple[dict[str, Any] | None, Any]:
    """The leaderboard's PPI columns and the final human verdicts (None without labels)."""
    if audit is None:
        return None, None
    from scoring.tables import audit as _audit

    inputs = scores.inputs
    final = audit.final()
    humans = _audit.human_scores(
        final, inputs.checks.question, inputs.checks.tier, len(inputs.questions), scores.config
    )
    rankings = [
        (idx, [inputs.submission_ids[int(s)] for s in scores.groups.sub[idx]])
        for idx, _ranking in scores.rankings.values()
    ]
    response_of = scores.groups.sub * 2 + scores.groups.setting
    columns = _audit.ppi_columns(
        scores.level.gamut,
        scores.complete,
        response_of,
        humans,
        scores.weights,
        rankings,
        scores.gamut.boot,
    )
    return columns, final


def _audit_tables(
    scores: Scores, audit: AuditLabels | None, final: Any
) -> Iterator[tuple[str, pd.DataFrame]]:
    from scoring.audit import AuditLabels as _Labels
    from scoring.tables import audit as _audit

    inputs = scores.inputs
    if audit is None:
        audit = _Labels.empty(len(inputs.submission_ids) * 2, inputs.checks.size)
        final = audit.final()
    g = scores.groups
    yield (
        "judge_human",
        _audit.judge_human(
            inputs.verdicts,
            scores.level.status,
            g.sub * 2 + g.setting,
            g.judge,
            inputs.judges,
            final,
            inputs.checks.kind,
            scores.config,
        ),
    )
    yield "human_human", _audit.human_human(audit, inputs.checks.kind, scores.config)


def iter_frames(
    scores: Scores, families: dict[str, str], audit: AuditLabels | None = None
) -> Iterator[tuple[str, pd.DataFrame]]:
    """Every table from computed scores (no I/O), in a fixed order, each as soon as it is built
    (the largest first, so that a writer encodes it while the others are built).

    Args:
        scores: from :func:`scoring.tables.scores.compute`.
        families: judge name -> the model family the judge belongs to.
        audit: the human audit labels, if the benchmark has any (docs/contract.md §11).
    """
    parts = _audit_parts(scores, audit)  # the leaderboard's PPI columns, the final labels
    yield "question_scores", _tables.question_scores(scores)
    leaderboard = _tables.leaderboard(scores, parts[0])
    yield "leaderboard", leaderboard
    for column in ("domain", "popularity", "egocentric"):
        yield f"by_{column}", _tables.breakdown(scores, column)
    yield "by_kind", _tables.by_kind(scores)
    modality = _tables.modality(scores)
    yield "modality", modality
    yield "pairwise", pairwise(scores)
    confusions = _judges.kind_confusions(scores)  # both kappa tables read them
    # the small tables, some of them from a table above
    yield "modality_summary", _tables.modality_summary(scores, modality)
    yield "judge_scores", _judges.judge_scores(leaderboard)
    yield "judge_tau", _judges.judge_tau(scores)
    yield "judge_leniency", _judges.judge_leniency(scores)
    yield "judge_self_preference", _judges.judge_self_preference(scores, families)
    yield "judge_family_matrix", _sensitivity.judge_family_matrix(scores, families)
    yield "rank_sensitivity", _sensitivity.rank_sensitivity(scores)
    yield "min_detectable_difference", _sensitivity.min_detectable_difference(scores)
    yield "judge_kappa", _judges.judge_kappa(scores, confusions)
    yield "judge_kappa_by_kind", _judges.judge_kappa_by_kind(scores, confusions)
    yield from _audit_tables(scores, audit, parts[1])
    yield "incomplete", _tables.incomplete(scores)


def build_tables(
    inputs: Inputs,
    scoring: ScoringConfig,
    judges: dict[str, dict[str, Any]],
    *,
    primary_judge: str,
    rubrics_public: bool,
    out_dir: Path,
    audit: AuditLabels | None = None,
    audit_simulated: bool = False,
) -> Tables:
    """Compute and write every score table into ``out_dir``.

    Args:
        inputs: from :func:`load_inputs`.
        scoring: the scoring parameters.
        judges: judge name -> its provenance (at least ``family``), in config order.
        primary_judge: the judge that ranks the leaderboard.
        rubrics_public: whether rubric text may be published (recorded in the provenance).
        out_dir: the results folder.
        audit: the human audit labels (:func:`scoring.audit.read_audit`), or None.
        audit_simulated: the labels are simulated (the demo's), which the provenance records
            so that every page showing them says so.

    Returns:
        The tables that were written, with their provenance and file paths.

    Raises:
        ScoringError: the verdicts are inconsistent.
    """
    scores = compute(inputs, scoring, primary_judge)
    prov = provenance(
        inputs,
        judges=judges,
        primary_judge=primary_judge,
        scoring=scoring,
        rubrics_public=rubrics_public,
    )
    prov["audit"] = (
        None
        if audit is None
        else {
            "labels": audit.size,
            "annotators": len(audit.annotators),
            "files": len(audit.files),
            "simulated": audit_simulated,
        }
    )
    frames: dict[str, pd.DataFrame] = {}

    def kept() -> Iterator[tuple[str, pd.DataFrame]]:  # each table written is also returned
        for name, df in iter_frames(
            scores, {n: str(j["family"]) for n, j in judges.items()}, audit
        ):
            frames[name] = df
            yield name, df

    files = write_tables(out_dir, kept(), prov, PARQUET_ONLY)
    files.append(write_provenance(out_dir, prov))
    return Tables(frames, prov, out_dir, files)


__all__ = [
    "MIN_KIND_CHECKS",
    "PAIRWISE_COLUMNS",
    "PROVENANCE_FILE",
    "RESPONSE_COLUMNS",
    "SECONDARY_NOTE",
    "TABLES",
    "VERDICT_KEY",
    "VERDICT_KEY_NOTE",
    "Inputs",
    "Tables",
    "arrow_type",
    "build_tables",
    "dictionary",
    "iter_frames",
    "judge_ids",
    "load_inputs",
    "neutralise",
    "response_table",
    "submission_slices",
    "undocumented",
    "verdict_table",
    "write_frame_csv",
    "write_table_csv",
]
