"""The score tables under ``<results>/`` (ARCHITECTURE.md, "The score tables"): the generator's
only input. Nothing here imports the scoring engine's internals."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.errors import Problem, ProblemsError
from scoring.layout import PROVENANCE_FILE
from scoring.tables import ResultsLayout, site_tables

_FIX = "run `gamut score` (or `gamut run`) to write the score tables first"


@dataclass(frozen=True)
class ScoreTables:
    """Every score table the site shows, read from one results folder."""

    results: Path
    frames: dict[str, pd.DataFrame]
    provenance: dict[str, Any]
    modality_summary: dict[str, dict[str, Any]]
    verdicts_path: Path | None = field(default=None)
    _mine: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict, repr=False)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.frames[name]

    def primary_rows(self, name: str, submission_id: str) -> pd.DataFrame:
        """The primary judge's rows of one submission in table ``name``, in table order (the
        table is split by submission once)."""
        if name not in self._mine:
            df = self.frames[name]
            df = df[df["judge"] == self.primary_judge]
            self._mine[name] = {str(k): g for k, g in df.groupby("submission_id", sort=False)}
        return self._mine[name].get(submission_id, self.frames[name].iloc[:0])

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
    """Accept a list of records with a ``judge`` key (as ``gamut score`` writes it) or
    ``{judge: {...}}``."""
    if isinstance(raw, list):
        return {str(r["judge"]): dict(r) for r in raw if isinstance(r, dict) and "judge" in r}
    if isinstance(raw, dict):
        return {str(k): dict(v) for k, v in raw.items() if isinstance(v, dict)}
    return {}


def _read_table(path: Path, cols: tuple[str, ...], problems: list[Problem]) -> pd.DataFrame | None:
    """One score table, or None with its problem (unreadable, or lacking ``cols``) noted."""
    try:
        df = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        problems.append(Problem(str(path), None, f"unreadable: {exc}", _FIX))
        return None
    missing = [c for c in cols if c not in df.columns]
    if missing:
        fix = "rebuild the tables with this version of `gamut score`"
        problems.append(Problem(str(path), None, f"missing columns: {', '.join(missing)}", fix))
        return None
    return df


def load_tables(results: Path) -> ScoreTables:
    """Read the score tables from ``results``; a :class:`ProblemsError` lists every missing
    file and every missing column at once."""
    problems: list[Problem] = []
    frames: dict[str, pd.DataFrame] = {}
    layout = ResultsLayout(results)
    for name, cols in {**site_tables(optional=False), **site_tables(optional=True)}.items():
        path = layout.table(name)
        if not path.is_file():
            if name in site_tables(optional=False):
                problems.append(Problem(str(path), None, "score table not found", _FIX))
            continue
        df = _read_table(path, cols, problems)
        if df is not None:
            categorical = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]
            frames[name] = df.astype(dict.fromkeys(categorical, object))
    prov_path = layout.provenance
    summary_path = layout.table("modality_summary", "json")
    for p in (prov_path, summary_path):
        if not p.is_file():
            problems.append(Problem(str(p), None, "file not found", _FIX))
    if problems:
        raise ProblemsError(problems, f"cannot build the site from {results}")
    verdicts = layout.verdicts
    return ScoreTables(
        results=results,
        frames=frames,
        provenance=dict(_read_json(prov_path)),
        modality_summary=_summary_by_judge(_read_json(summary_path)),
        verdicts_path=verdicts if verdicts.is_file() else None,
    )


#: The most of ``provenance.json`` a digest reads.
MAX_PROVENANCE = 1 << 20


def content_digest(path: Path) -> str:
    """The digest of a results file, less when the tables were written: ``generated_at`` in
    ``provenance.json`` and in each Parquet file's footer (the tables rewritten unchanged digest
    alike; the footer also holds the schema, which the CSV beside it repeats)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - 8))
        tail = f.read(8)
        if path.suffix == ".parquet" and len(tail) == 8 and tail[4:] == b"PAR1":
            size = max(0, size - 8 - int.from_bytes(tail[:4], "little"))
        f.seek(0)
        if path.name == PROVENANCE_FILE:
            text = f.read(MAX_PROVENANCE).decode("utf-8", errors="replace")
            return hashlib.sha256(
                re.sub(r'"generated_at": *"[^"]*"', "", text).encode()
            ).hexdigest()
        while size > 0 and (chunk := f.read(min(size, 1 << 20))):
            h.update(chunk)
            size -= len(chunk)
    return h.hexdigest()
