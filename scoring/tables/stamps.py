"""What produced each leaderboard row (the verdict table's :data:`STAMPS` record of the rubric
version and each judge's model, prompt and snapshots), and whether it is stale: judged under
another rubric version, judge model or prompt than the current ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from scoring import __version__
from scoring.errors import GamutError
from scoring.tables.columns import STAMP_COLUMNS
from scoring.verdicts import STAMPS

#: ``stale_reason`` of the rows of a verdict table that records nothing of what judged it.
UNRECORDED = (
    "the verdict table records no versions (written by an older engine or not by `gamut "
    "judge`): rewrite it with `gamut judge`"
)
_FIX = "rewrite the verdict table with `gamut judge`"


def read_stamps(path: Path) -> dict[str, Any] | None:
    """What judged the verdict table at ``path``, or None when it records nothing."""
    try:
        meta = pq.read_metadata(path).metadata or {}  # the file's: the writer adds it last
    except OSError as exc:
        raise GamutError(f"cannot read the verdict table {path}: {exc} ({_FIX})") from None
    raw = meta.get(STAMPS)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise GamutError(
            f"{path}: its {STAMPS.decode()} record is not JSON ({exc}); {_FIX}"
        ) from None
    if not isinstance(value, dict) or not isinstance(value.get("judges"), dict):
        raise GamutError(f"{path}: its {STAMPS.decode()} record is not an object; {_FIX}")
    return value


@dataclass(frozen=True)
class Current:
    """What the rows would be judged under now: the rubric set's version, the question set's
    release version (or None), and judge name -> its provenance."""

    rubric_version: str
    benchmark_version: str | None
    judges: Mapping[str, Mapping[str, Any]]


def short_version(value: object) -> str:
    """A digest for people: its algorithm and 12 hex digits (``sha256:1abb7c0e3f2a``)."""
    algo, _, digest = str(value).rpartition(":")
    return f"{algo}:{digest[:12]}" if algo else digest[:12]


def _reasons(rubric: object, rec: Mapping[str, Any], now: Current, judge: str) -> list[str]:
    out = []
    if rubric != now.rubric_version:
        was, is_ = short_version(rubric), short_version(now.rubric_version)
        out.append(f"judged under rubric version {was}, now {is_}")
    cur = now.judges.get(judge, {})
    if rec.get("model") != cur.get("model"):
        out.append(f"judged by model {rec.get('model')}, configured now {cur.get('model')}")
    then = (rec.get("prompt_version"), rec.get("prompt_digest"))
    current = (cur.get("prompt_template") or cur.get("prompt_version"), cur.get("prompt_digest"))
    if then != current:
        out.append(
            f"judged with prompt {then[0]} (template {then[1]}), now {current[0]} "
            f"(template {current[1]})"
        )
    return out


def stamp(leaderboard: pd.DataFrame, recorded: dict[str, Any] | None, now: Current) -> pd.DataFrame:
    """``leaderboard`` with the :data:`STAMP_COLUMNS` added: a row with no verdict is not stale;
    without a record (``recorded`` None) the judge stamps are empty and ``stale`` is null."""
    rows = []
    judges = (recorded or {}).get("judges", {})
    keys = ["submission_id", "setting", "judge", "n_checks_missing", "n_checks"]
    for sub, setting, judge, missing, total in leaderboard[keys].itertuples(index=False):
        judged = int(missing) < int(total)
        rec = judges.get(judge) if judged else None
        row: dict[str, Any] = dict.fromkeys(STAMP_COLUMNS)
        row["benchmark_version"] = now.benchmark_version
        row["engine_version"] = __version__
        if recorded is not None and rec is not None:
            snaps = rec.get("snapshots", {}).get(sub, {}).get(setting, [])
            row["rubric_version"] = recorded.get("rubric_version")
            row["judge_model"] = rec.get("model")
            row["judge_snapshot"] = ", ".join(snaps) if snaps else None
            row["prompt_version"] = rec.get("prompt_version")
            row["prompt_digest"] = rec.get("prompt_digest")
            why = _reasons(row["rubric_version"], rec, now, str(judge))
            row["stale"], row["stale_reason"] = bool(why), "; ".join(why) or None
        elif not judged:
            row["stale"] = False
        elif recorded is None:
            row["stale_reason"] = UNRECORDED
        else:
            row["stale_reason"] = f"the verdict table records nothing of judge {judge}"
        rows.append(row)
    out = leaderboard.copy()
    for name in STAMP_COLUMNS:
        values = [r[name] for r in rows]
        out[name] = pd.array(values, dtype="boolean") if name == "stale" else values
    return out
