"""The score tables (SPEC sections 6 and 8): verdicts in, every table the leaderboard shows out.

``build_tables(cfg)`` reads the questions, rubrics, submissions and ``<results>/verdicts.parquet``,
checks completeness, scores, bootstraps over questions, and writes the tables of ARCHITECTURE.md
"The score tables" under ``<results>/``. No table holds rubric or check text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.config import GamutConfig
from scoring.report import judges as _judges
from scoring.report import tables as _tables
from scoring.report.load import Inputs, load_inputs
from scoring.report.scores import Scores, compute
from scoring.report.write import provenance, write_provenance, write_table
from scoring.rubric import MetaRubric

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


def score_frames(scores: Scores, families: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Every table from computed scores (no I/O).

    Args:
        scores: from :func:`scoring.report.scores.compute`.
        families: judge name -> the model family the judge belongs to.
    """
    leaderboard = _tables.leaderboard(scores)
    modality = _tables.modality(scores)
    return {
        "question_scores": _tables.question_scores(scores),
        "leaderboard": leaderboard,
        "by_domain": _tables.breakdown(scores, "domain"),
        "by_popularity": _tables.breakdown(scores, "popularity"),
        "by_egocentric": _tables.breakdown(scores, "egocentric"),
        "by_kind": _tables.by_kind(scores),
        "modality": modality,
        "modality_summary": _tables.modality_summary(scores, modality),
        "judge_scores": _judges.judge_scores(leaderboard),
        "judge_tau": _judges.judge_tau(scores),
        "judge_leniency": _judges.judge_leniency(scores),
        "judge_self_preference": _judges.judge_self_preference(scores, families),
        "judge_kappa": _judges.judge_kappa(scores),
        "incomplete": _tables.incomplete(scores),
    }


def build_tables(cfg: GamutConfig, rubrics: dict[str, MetaRubric] | None = None) -> Tables:
    """Compute and write every score table under ``<results>/``.

    Args:
        cfg: the project configuration (paths, scoring parameters, judges).
        rubrics: already loaded rubrics; read from the configured path when omitted.

    Returns:
        The tables that were written, with their provenance and file paths.

    Raises:
        ProblemsError: an input file is invalid (every problem listed).
        ScoringError: the verdict table is missing or inconsistent.
    """
    inputs: Inputs = load_inputs(cfg, rubrics)
    scores = compute(inputs, cfg.scoring, cfg.primary_judge)
    frames = score_frames(scores, {n: j.family for n, j in cfg.judges.items()})
    prov = provenance(cfg, inputs)
    out_dir = cfg.path(cfg.store.results)
    files: list[Path] = []
    for name, df in frames.items():
        files += write_table(out_dir, name, df, prov, text=name not in PARQUET_ONLY)
    files.append(write_provenance(out_dir, prov))
    return Tables(frames, prov, out_dir, files)


__all__ = ["Tables", "build_tables", "score_frames"]
