"""The stamp of a leaderboard row on the site: what judged it, and whether that is stale.

The columns are the leaderboard's (``scoring/tables/stamps.py``); score tables written before them
have none, and a row then shows as "not recorded", like a row whose verdict table records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from generator.render import Cell, Column
from scoring.tables import short_version

#: The leaderboard and model-page column.
STAMP_COLUMN = Column(
    "stamp",
    "Judged",
    "stamp",
    "Current: judged under the current rubric version, judge model and prompt; stale: judged "
    "under older ones (hover for what changed)",
)
#: The legend entry of that column (the model pages'; the leaderboard adds its filter).
STAMP_LEGEND = (
    "Judged",
    "What judged the row (hover for its rubric version, judge model and snapshot, prompt "
    "version and engine). Stale: the row was judged under an older rubric version, judge model "
    "or prompt than the current ones and is not yet rejudged; the note says what changed.",
)
#: The leaderboard's legend entry: the same, and its filter.
STAMP_LEGEND_FILTER = (STAMP_LEGEND[0], STAMP_LEGEND[1] + " “Hide stale rows” hides them.")


def text(value: Any) -> str | None:
    """``value`` as text, None when it is missing (None, NaN or pandas' NA)."""
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return None
    return str(value)


def is_stale(row: Mapping[Any, Any]) -> bool:
    """Whether the row is known to be stale (an unknown row is not)."""
    return text(row.get("stale")) == "True"


def stamp_detail(row: Mapping[Any, Any]) -> str:
    """What judged the row, in one line (empty when nothing is recorded)."""
    parts = []
    if text(row.get("benchmark_version")):
        parts.append(f"benchmark {row['benchmark_version']}")
    if text(row.get("rubric_version")):
        parts.append(f"rubric {short_version(row['rubric_version'])}")
    if text(row.get("judge_model")):
        snap = text(row.get("judge_snapshot"))
        parts.append(f"judge {row['judge_model']}" + (f" (snapshot {snap})" if snap else ""))
    if text(row.get("prompt_version")):
        parts.append(f"prompt {row['prompt_version']} (template {row.get('prompt_digest')})")
    if text(row.get("engine_version")):
        parts.append(f"engine {row['engine_version']}")
    return ", ".join(parts)


def stamp_cell(row: Mapping[Any, Any]) -> Cell:
    """The row's "Judged" cell: ``current``, ``stale`` or ``not recorded``; ``extra`` is the
    tooltip (what changed, then what judged it)."""
    detail = stamp_detail(row)
    reason = text(row.get("stale_reason"))
    if is_stale(row):
        return Cell("stale", extra=f"Stale: {reason}. Judged with {detail}.")
    if text(row.get("stale")) == "False":
        return Cell("current", extra=f"Judged with {detail}." if detail else "No verdict yet.")
    return Cell("not recorded", extra=reason or "The score tables record no versions.")
