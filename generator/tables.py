"""The score tables under ``<results>/`` (ARCHITECTURE.md, "The score tables"): the generator's
only input. Nothing here imports the scoring engine's internals."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.errors import GamutError, Problem, ProblemsError
from scoring.tables import PAIRWISE_COLUMNS, PROVENANCE_FILE
from scoring.verdicts import DRIFT_COLUMNS, VERDICT_COLUMNS, VERDICT_TABLE, VERDICT_TEXT_COLUMNS

#: The leaderboard's cost columns (the cost page and the model pages read them).
COST_COLUMNS = (
    "judge_calls",
    "judge_tokens_in",
    "judge_tokens_cached",
    "judge_tokens_out",
    "judge_tokens_recorded",
    "judge_cost_usd",
    "model_tokens_in",
    "model_tokens_out",
    "model_tokens_recorded",
)
#: Parquet tables the site needs, with the columns it reads from each.
REQUIRED: dict[str, tuple[str, ...]] = {
    "leaderboard": (
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
    "by_domain": (
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
    "question_scores": (
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
    "pairwise": PAIRWISE_COLUMNS,
    "by_popularity": (
        "submission_id",
        "setting",
        "judge",
        "popularity",
        "gamut",
        "gamut_lo",
        "gamut_hi",
    ),
    "by_egocentric": (
        "submission_id",
        "setting",
        "judge",
        "egocentric",
        "gamut",
        "gamut_lo",
        "gamut_hi",
    ),
    "by_kind": (
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
    "modality": ("submission_id", "judge", "multimodal", "text_only", "gap", "gap_lo", "gap_hi"),
    "judge_scores": ("submission_id", "setting", "judge", "gamut", "gamut_lo", "gamut_hi", "rank"),
    "judge_tau": ("setting", "judge_a", "judge_b", "tau_b", "max_abs_diff", "max_diff_submission"),
    "judge_leniency": ("setting", "judge", "offset", "offset_lo", "offset_hi"),
    "judge_self_preference": (
        "setting",
        "judge",
        "family",
        "own_score",
        "others_score_of_own",
        "own_minus_others",
    ),
    "judge_kappa": ("setting", "judge_a", "judge_b", "kappa", "n_checks", "agreement"),
    "judge_kappa_by_kind": (
        "setting",
        "judge_a",
        "judge_b",
        "kind",
        "secondary",
        "kappa",
        "n_checks",
    ),
}

#: Tables shown when present (written only when something happened: a judge's snapshot changed).
OPTIONAL: dict[str, tuple[str, ...]] = {
    "judge_drift": DRIFT_COLUMNS,
    "judge_human": ("setting", "judge", "kind", "n_checks", "agreement", "kappa", "macro_f1"),
    "human_human": ("setting", "kind", "n_checks", "agreement", "kappa", "macro_f1"),
    "rank_sensitivity": ("setting", "submission_id", "judge", "rank", "rank_change"),
    "min_detectable_difference": ("setting", "judge", "board", "n_questions", "mdd"),
}

#: Columns of the verdict table that never carry rubric text.
VERDICT_ID_COLUMNS: tuple[str, ...] = VERDICT_COLUMNS


class SiteError(GamutError):
    """The site cannot be built (missing project files, unreadable tables, or mkdocs failed)."""


_FIX = "run `gamut score` (or `gamut run`) to write the score tables first"


@dataclass(frozen=True)
class ScoreTables:
    """Every score table the site shows, read from one results folder."""

    results: Path
    frames: dict[str, pd.DataFrame]
    provenance: dict[str, Any]
    modality_summary: dict[str, dict[str, Any]]
    verdicts_path: Path | None = field(default=None)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.frames[name]

    @property
    def primary_judge(self) -> str:
        """The judge that ranks the leaderboard, as recorded by the run."""
        named = self.provenance.get("primary_judge")
        if named:
            return str(named)
        lb = self.frames["leaderboard"]
        prim = lb.loc[lb["primary"].astype(bool), "judge"]
        return str(prim.iloc[0]) if len(prim) else str(lb["judge"].iloc[0])

    @property
    def is_demo(self) -> bool:
        """True when the run or any submission is the synthetic demo."""
        lb = self.frames["leaderboard"]
        flagged = bool(lb["demo"].fillna(False).astype(bool).any())
        return bool(self.provenance.get("demo")) or flagged

    @property
    def offline_matcher(self) -> list[str]:
        """The judges whose unrecorded requests the demo's offline matcher answered."""
        judges = self.provenance.get("judges") or {}
        return [n for n, j in judges.items() if j.get("unrecorded") == "offline-match"]


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _summary_by_judge(raw: Any) -> dict[str, dict[str, Any]]:
    """Accept ``{judge: {...}}`` or a list of records with a ``judge`` key."""
    if isinstance(raw, list):
        return {str(r["judge"]): dict(r) for r in raw if isinstance(r, dict) and "judge" in r}
    if isinstance(raw, dict):
        if "judge" in raw and isinstance(raw.get("judge"), dict):
            cols = raw
            judges = cols["judge"]
            return {
                str(j): {k: v[i] for k, v in cols.items() if isinstance(v, dict) and i in v}
                for i, j in judges.items()
            }
        return {str(k): dict(v) for k, v in raw.items() if isinstance(v, dict)}
    return {}


def _read_table(
    path: Path, cols: tuple[str, ...], fix: str, problems: list[Problem]
) -> pd.DataFrame | None:
    """One score table, or None with its problem (unreadable, or lacking ``cols``) noted."""
    try:
        df = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        problems.append(Problem(str(path), None, f"unreadable: {exc}", _FIX))
        return None
    missing = [c for c in cols if c not in df.columns]
    if missing:
        problems.append(Problem(str(path), None, f"missing columns: {', '.join(missing)}", fix))
        return None
    return df


def load_tables(results: Path) -> ScoreTables:
    """Read the score tables from ``results``.

    Raises:
        ProblemsError: listing every missing file and every missing column at once.
    """
    problems: list[Problem] = []
    frames: dict[str, pd.DataFrame] = {}
    for name, cols in REQUIRED.items():
        path = results / f"{name}.parquet"
        if not path.is_file():
            problems.append(Problem(str(path), None, "score table not found", _FIX))
            continue
        df = _read_table(
            path, cols, "rebuild the tables with this version of `gamut score`", problems
        )
        if df is not None:
            for c in df.columns:
                if isinstance(df[c].dtype, pd.CategoricalDtype):
                    df[c] = df[c].astype(object)
            frames[name] = df
    for name, cols in OPTIONAL.items():
        path = results / f"{name}.parquet"
        if path.is_file():
            df = _read_table(path, cols, "rerun `gamut judge` with this version", problems)
            if df is not None:
                frames[name] = df
    prov_path = results / PROVENANCE_FILE
    summary_path = results / "modality_summary.json"
    for p in (prov_path, summary_path):
        if not p.is_file():
            problems.append(Problem(str(p), None, "file not found", _FIX))
    if problems:
        raise ProblemsError(problems, f"cannot build the site from {results}")
    verdicts = results / VERDICT_TABLE
    return ScoreTables(
        results=results,
        frames=frames,
        provenance=dict(_read_json(prov_path)),
        modality_summary=_summary_by_judge(_read_json(summary_path)),
        verdicts_path=verdicts if verdicts.is_file() else None,
    )


__all__ = [
    "COST_COLUMNS",
    "REQUIRED",
    "VERDICT_ID_COLUMNS",
    "VERDICT_TEXT_COLUMNS",
    "ScoreTables",
    "SiteError",
    "load_tables",
]
