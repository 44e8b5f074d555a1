"""The leaderboard's cost columns: what judging each row cost, priced from the usage table
(:mod:`scoring.judge.usage`) by :meth:`scoring.judge.spec.JudgeConfig.cost`, the one pricing rule,
and the model's own tokens. A row has figures only when every verdict recorded its tokens
(replayed and offline-matched ones record none): no partial sum reads as a row's cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.errors import GamutError
from scoring.judge.spec import JudgeConfig
from scoring.judge.usage import USAGE_COLUMNS
from scoring.tables.matrix import SETTINGS
from scoring.verdicts import FINGERPRINT

Floats = npt.NDArray[np.float64]

#: The price mode of each verdict source that records tokens (``replay`` records none).
PRICE_MODE = {"direct": "direct", "batch": "batch", "import": "batch"}
#: The judging columns of the leaderboard, in order.
JUDGE_COST_COLUMNS = (
    "judge_calls",
    "judge_tokens_in",
    "judge_tokens_cached",
    "judge_tokens_out",
    "judge_tokens_recorded",
    "judge_cost_usd",
)
_TOKENS = ("tokens_in", "tokens_cached", "tokens_out")
_FIX = "run `gamut judge` (or `gamut run`): it writes the verdict and usage tables together"


def read_usage(path: Path, verdict_table: Path) -> pd.DataFrame | None:
    """The usage table at ``path`` (None when there is none: every cost column is then empty);
    GamutError when unreadable, lacking a column, or another verdict table's."""
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path)
        theirs = (pq.read_schema(verdict_table).metadata or {}).get(FINGERPRINT)
    except (OSError, pa.ArrowException) as exc:
        raise GamutError(f"cannot read the usage table {path}: {exc} ({_FIX})") from None
    missing = [c for c in USAGE_COLUMNS if c not in table.column_names]
    if missing:
        raise GamutError(f"the usage table {path} lacks {', '.join(missing)} ({_FIX})")
    ours = (table.schema.metadata or {}).get(FINGERPRINT)
    if ours != theirs:
        raise GamutError(
            f"the usage table {path} was written for another verdict table than "
            f"{verdict_table} ({_FIX})"
        )
    frame: pd.DataFrame = table.to_pandas()
    return frame


#: The model's own token columns of the leaderboard, in order.
MODEL_TOKEN_COLUMNS = ("model_tokens_in", "model_tokens_out", "model_tokens_recorded")
#: The leaderboard's cost columns (the site's cost page and model pages read them).
COST_COLUMNS = (*JUDGE_COST_COLUMNS, *MODEL_TOKEN_COLUMNS)


def model_tokens(usage: npt.NDArray[np.int64], n_judges: int) -> dict[str, Floats]:
    """Per group, the model's own tokens of the setting's responses (the same for every judge):
    the share of responses recording them, and their sums when every one does (else NaN)."""
    flat = usage.reshape(-1, 4).astype(np.float64)
    n, counted, t_in, t_out = flat.T
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, counted / n, np.nan)
    every = share == 1.0
    per_response = {
        "model_tokens_in": np.where(every, t_in, np.nan),
        "model_tokens_out": np.where(every, t_out, np.nan),
        "model_tokens_recorded": share,
    }
    return {c: np.repeat(v, n_judges) for c, v in per_response.items()}


def judging_cost(
    usage: pd.DataFrame | None,
    judges: Mapping[str, JudgeConfig],
    submission_ids: Sequence[str],
    judge_names: Sequence[str],
) -> dict[str, Floats]:
    """Per (submission, setting, judge) group, in group order, the judging columns
    (:data:`JUDGE_COST_COLUMNS`; NaN where unknown) from the usage table (:func:`read_usage`;
    None: nothing known), priced with each judge's config (a judge without one has no cost)."""
    n_j = len(judge_names)
    n = len(submission_ids) * len(SETTINGS) * n_j
    out = {c: np.full(n, np.nan) for c in JUDGE_COST_COLUMNS}
    if usage is None:
        return out
    position = {
        "submission_id": {s: i for i, s in enumerate(submission_ids)},
        "setting": {s.value: i for i, s in enumerate(SETTINGS)},
        "judge": {j: i for i, j in enumerate(judge_names)},
    }
    sub, k, jj = (usage[c].astype(str).map(at).to_numpy(np.float64) for c, at in position.items())
    kept = ~(np.isnan(sub) | np.isnan(k) | np.isnan(jj))  # a submission or judge not scored now
    u = usage[kept]
    g = ((sub[kept] * len(SETTINGS) + k[kept]) * n_j + jj[kept]).astype(np.int64)
    mode = [PRICE_MODE.get(m) for m in u["source"].astype(str)]
    rec = np.array([m is not None for m in mode], np.bool_)
    counts = {c: u[c].to_numpy(np.float64) for c in ("n_verdicts", "calls", *_TOKENS)}
    usd = [
        None if m is None or (config := judges.get(name)) is None else config.cost(m, *tokens)
        for m, name, *tokens in zip(
            mode, u["judge"].astype(str), *(u[c] for c in _TOKENS), strict=True
        )
    ]
    counts["usd"] = np.array([np.nan if x is None else x for x in usd], np.float64)
    total = {c: np.bincount(g[rec], v[rec], n).astype(np.float64) for c, v in counts.items()}
    for j, name in enumerate(judge_names):
        config = judges.get(name)
        if config is None or (config.prices("direct") is None and config.prices("batch") is None):
            total["usd"][j::n_j] = np.nan  # no prices configured: no cost, even of nothing
    verdicts = np.bincount(g, counts["n_verdicts"], minlength=n)
    full = total["n_verdicts"] == verdicts  # also a row with nothing asked: its figures are zeros
    with np.errstate(invalid="ignore", divide="ignore"):
        out["judge_tokens_recorded"] = np.where(
            verdicts > 0, total["n_verdicts"] / verdicts, np.nan
        )
    out["judge_calls"] = np.where(full, total["calls"], np.nan)
    for c in _TOKENS:
        out[f"judge_{c}"] = np.where(full, total[c], np.nan)
    out["judge_cost_usd"] = np.where(full, total["usd"], np.nan)
    return out
