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
from scoring.csvcells import neutralise, write_frame_csv, write_table_csv
from scoring.layout import PROVENANCE_FILE, ResultsLayout
from scoring.scorer import ScoringConfig
from scoring.tables import audit as _audit
from scoring.tables import registry
from scoring.tables.columns import (
    MIN_KIND_CHECKS,
    SECONDARY_NOTE,
    TABLES,
    VERDICT_KEY,
    VERDICT_KEY_NOTE,
    arrow_type,
    dictionary,
    undocumented,
)
from scoring.tables.cost import COST_COLUMNS
from scoring.tables.load import Inputs, load_inputs
from scoring.tables.pairwise import PAIRWISE_COLUMNS
from scoring.tables.published import (
    RESPONSE_COLUMNS,
    codes,
    judge_ids,
    published_types,
    response_table,
    submission_slices,
    verdict_table,
)
from scoring.tables.registry import ScoreTable, score_table, score_tables, site_tables
from scoring.tables.scores import Scores, compute
from scoring.tables.stamps import Current, short_version, stamp
from scoring.tables.write import provenance, write_provenance, write_tables


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
        _audit.question_strata(inputs.questions),
        scores.gamut.boot,
    )
    return columns, final


def iter_frames(
    scores: Scores,
    families: dict[str, str],
    audit: AuditLabels | None = None,
    costs: dict[str, Any] | None = None,
    drift: list[dict[str, object]] | None = None,
) -> Iterator[tuple[str, pd.DataFrame]]:
    """Every table of :data:`scoring.tables.registry.SCORE_TABLES` from computed scores (no
    I/O), each as soon as it is built: first the early ones (the largest first, so that a writer
    encodes it while the others are built), then the rest, each in registry order.

    Args:
        scores: from :func:`scoring.tables.scores.compute`.
        families: judge name -> the model family the judge belongs to.
        audit: the human audit labels, if the benchmark has any (docs/contract.md §11).
        costs: the leaderboard's judging columns per group (:func:`scoring.tables.cost.
            judging_cost`), or None (empty columns).
        drift: the ``judge_drift`` rows (none: no judge's model snapshot changed).
    """
    entries = score_tables()
    built = registry.Built(scores, families, audit, _audit_parts(scores, audit), costs)
    built.drift = drift or []
    for t in [*(t for t in entries if t.early), *(t for t in entries if not t.early)]:
        built.frames[t.name] = df = t.build(built)
        yield t.name, df


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
    costs: dict[str, Any] | None = None,
    benchmark_version: str | None = None,
    drift: list[dict[str, object]] | None = None,
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
        costs: the leaderboard's judging columns per group, from
            :func:`scoring.tables.cost.judging_cost` (None: empty columns).
        benchmark_version: the question set's release version (``benchmark_version`` of the
            config), stamped on every leaderboard row; None: the set is not versioned.
        drift: the ``judge_drift`` rows (none: no judge's model snapshot changed).

    Returns:
        The tables that were written, with their provenance and file paths.

    Raises:
        GamutError: the verdicts are inconsistent.
    """
    scores = compute(inputs, scoring, primary_judge)
    prov = provenance(
        inputs,
        judges=judges,
        primary_judge=primary_judge,
        scoring=scoring,
        rubrics_public=rubrics_public,
    )
    prov["benchmark_version"] = benchmark_version
    now = Current(inputs.rubric_version, benchmark_version, judges)
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
            scores, {n: str(j["family"]) for n, j in judges.items()}, audit, costs, drift
        ):
            if name == "leaderboard":  # each row stamped with what produced it
                df = stamp(df, inputs.stamps, now)
            frames[name] = df
            yield name, df

    parquet_only = {t.name for t in score_tables() if t.large}
    files = write_tables(out_dir, kept(), prov, parquet_only)
    files.append(write_provenance(out_dir, prov))
    return Tables(frames, prov, out_dir, files)


__all__ = [
    "COST_COLUMNS",
    "MIN_KIND_CHECKS",
    "PAIRWISE_COLUMNS",
    "PROVENANCE_FILE",
    "RESPONSE_COLUMNS",
    "SECONDARY_NOTE",
    "TABLES",
    "VERDICT_KEY",
    "VERDICT_KEY_NOTE",
    "Inputs",
    "ResultsLayout",
    "ScoreTable",
    "Tables",
    "arrow_type",
    "build_tables",
    "codes",
    "dictionary",
    "iter_frames",
    "judge_ids",
    "load_inputs",
    "neutralise",
    "published_types",
    "response_table",
    "score_table",
    "score_tables",
    "short_version",
    "site_tables",
    "submission_slices",
    "undocumented",
    "verdict_table",
    "write_frame_csv",
    "write_table_csv",
]
