"""The verdict table (ARCHITECTURE.md, "The verdict table"), built from the verdict cache.

One row per (submission, setting, judge, question, check) of the current submissions and rubrics
that has a verdict. An empty response has ``missing`` on every check (no call was made). Rationale
and check text are included only when rubrics are public.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from scoring.compiler import CheckKind
from scoring.errors import GamutError
from scoring.judge.cache import VerdictCache
from scoring.judge.inputs import ResponseUnit
from scoring.judge.judges import BuiltJudge, check_keys
from scoring.questions import Setting
from scoring.rubric import Tier
from scoring.storage import atomic_write
from scoring.verdicts import VERDICT_COLUMNS, Verdict

EMPTY_RATIONALE = "The response is empty."
_CATEGORICAL = (
    "submission_id",
    "setting",
    "judge",
    "question_id",
    "check_id",
    "kind",
    "tier",
    "verdict",
)


def verdict_frame(
    units: list[ResponseUnit],
    judges: list[BuiltJudge],
    cache_path: Path,
    *,
    public: bool,
    judge_ids: bool = False,
) -> pd.DataFrame:
    """Every cached verdict of the given units, as a table.

    Args:
        units: the current responses with their checks.
        judges: the judges whose verdicts to read.
        cache_path: the verdict cache.
        public: rubrics are public: add the ``rationale`` and ``check_text`` columns.
        judge_ids: add a ``judge_id`` column (provider:model@prompt-version) after ``judge``.
    """
    cols: dict[str, list[Any]] = {c: [] for c in VERDICT_COLUMNS}
    labels: list[str] = []
    rationale: list[str] = []
    check_text: list[str] = []
    with VerdictCache(cache_path) as cache:
        for j in judges:
            stored = cache.verdicts(j.identity)
            for u in units:
                empty = not u.response.strip()
                for c, key in zip(
                    u.checks, check_keys(j.identity, j.backend.keyed_by_ids, u), strict=True
                ):
                    if empty:
                        verdict, why = Verdict.MISSING.value, EMPTY_RATIONALE
                    else:
                        hit = stored.get(key)
                        if hit is None:
                            continue
                        verdict, why = hit.verdict, hit.rationale
                    for name, value in (
                        ("submission_id", u.submission_id),
                        ("setting", u.setting.value),
                        ("judge", j.name),
                        ("question_id", u.question_id),
                        ("check_id", c.check_id),
                        ("kind", c.kind.value),
                        ("tier", c.tier.value),
                        ("secondary", c.secondary),
                        ("verdict", verdict),
                    ):
                        cols[name].append(value)
                    labels.append(j.label)
                    if public:
                        rationale.append(why)
                        check_text.append(c.text)
    df = pd.DataFrame(cols, columns=list(VERDICT_COLUMNS))
    fixed = {
        "setting": [x.value for x in Setting],
        "kind": [x.value for x in CheckKind],
        "tier": [x.value for x in Tier],
        "verdict": [x.value for x in Verdict],
    }
    for name in _CATEGORICAL:
        df[name] = (
            pd.Categorical(df[name], categories=fixed[name])
            if name in fixed
            else df[name].astype("category")
        )
    df["secondary"] = df["secondary"].astype(bool)
    if judge_ids:
        df.insert(list(df.columns).index("judge") + 1, "judge_id", labels)
    if public:
        df["rationale"] = rationale
        df["check_text"] = check_text
    return df


def write_verdict_table(df: pd.DataFrame, out: Path) -> Path:
    """Write the verdict table ``df`` (from :func:`verdict_frame`) to ``out``; returns ``out``."""
    atomic_write(out, lambda tmp: df.to_parquet(tmp, index=False))
    return out


def export_verdicts(df: pd.DataFrame, out: Path) -> int:
    """Export the verdict table ``df`` (with ``judge_id``) to ``out``; returns the rows.

    The format follows the extension: ``.parquet``, ``.csv`` or ``.jsonl``.

    Raises:
        GamutError: for any other extension.
    """
    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv", ".jsonl"):
        raise GamutError(f"cannot export to {out.name!r}: use a .parquet, .csv or .jsonl file")
    if suffix == ".parquet":
        atomic_write(out, lambda tmp: df.to_parquet(tmp, index=False))
    elif suffix == ".csv":
        atomic_write(out, lambda tmp: df.to_csv(tmp, index=False))
    else:
        atomic_write(
            out, lambda tmp: df.to_json(tmp, orient="records", lines=True, force_ascii=False)
        )
    return len(df)


__all__ = ["EMPTY_RATIONALE", "export_verdicts", "verdict_frame", "write_verdict_table"]
