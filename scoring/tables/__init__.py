"""The score tables (docs/contract.md §6 and §8): :func:`load_inputs` reads the submissions and
verdicts, :func:`build_tables` scores them and writes every table of
:data:`scoring.tables.registry.SCORE_TABLES`. No table holds rubric or check text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.audit import AuditLabels
from scoring.csvcells import write_table_csv
from scoring.layout import PROVENANCE_FILE, ResultsLayout
from scoring.scorer import ScoringConfig
from scoring.tables import registry
from scoring.tables.columns import (
    MIN_KIND_CHECKS,
    SECONDARY_NOTE,
    VERDICT_KEY_NOTE,
    arrow_type,
    dictionary,
    undocumented,
)
from scoring.tables.cost import COST_COLUMNS
from scoring.tables.load import Inputs, load_inputs
from scoring.tables.published import (
    codes,
    judge_ids,
    published_types,
    response_table,
    submission_slices,
    verdict_table,
)
from scoring.tables.registry import score_tables, site_tables
from scoring.tables.scores import compute
from scoring.tables.stamps import Current, short_version, stamp
from scoring.tables.write import provenance, write_provenance, write_tables


@dataclass(frozen=True)
class Tables:
    """The score tables written under ``out_dir``: name -> frame, their provenance (also in
    ``provenance.json`` and every Parquet file) and every file written."""

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
    """Compute every score table from ``inputs`` and write it into ``out_dir``. ``judges``: name
    -> provenance (at least ``family``), in config order; ``audit_simulated``: the labels are the
    demo's; ``costs``: :func:`scoring.tables.cost.judging_cost`; ``benchmark_version`` is stamped
    on every leaderboard row; ``drift``: the ``judge_drift`` rows."""
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
    families = {n: str(j["family"]) for n, j in judges.items()}
    built = registry.Built(scores, families, audit, costs, drift or [])

    def frames() -> Iterator[tuple[str, pd.DataFrame]]:  # each table encoded as it is built
        for t in score_tables():
            df = t.build(built)
            if t.name == "leaderboard":  # each row stamped with what produced it
                df = stamp(df, inputs.stamps, now)
            built.frames[t.name] = df
            yield t.name, df

    parquet_only = {t.name for t in score_tables() if t.large}
    files = write_tables(out_dir, frames(), prov, parquet_only)
    files.append(write_provenance(out_dir, prov))
    return Tables(built.frames, prov, out_dir, files)


__all__ = [
    "COST_COLUMNS",
    "MIN_KIND_CHECKS",
    "PROVENANCE_FILE",
    "SECONDARY_NOTE",
    "VERDICT_KEY_NOTE",
    "Inputs",
    "ResultsLayout",
    "Tables",
    "arrow_type",
    "build_tables",
    "codes",
    "dictionary",
    "judge_ids",
    "load_inputs",
    "published_types",
    "response_table",
    "score_tables",
    "short_version",
    "site_tables",
    "submission_slices",
    "undocumented",
    "verdict_table",
    "write_table_csv",
]
