"""The leaderboard's cost columns: what judging each row cost, and the model's own tokens.

Judging cost comes from the usage table beside the verdict table (:mod:`scoring.judge.usage`),
priced with the judge's configured prices (:meth:`scoring.judge.spec.JudgeConfig.cost`, the one
pricing rule: direct calls at direct prices, provider batches and imported batch files at batch
prices). Replayed verdicts and the demo's offline matcher record no tokens, so figures are given
only for a row whose every verdict recorded its tokens: no partial sum reads as a row's cost.
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
_FIX = "run `gamut judge` (or `gamut run`): it writes the verdict and usage tables together"


def read_usage(path: Path, verdict_table: Path) -> pd.DataFrame | None:
    """The usage table at ``path`` (None when there is none: every cost column is then empty).

    Raises:
        GamutError: it cannot be read, lacks a column, or was written for another verdict
            table than the one at ``verdict_table`` (their fingerprints differ).
    """
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


def model_tokens(usage: npt.NDArray[np.int64] | None, n_judges: int) -> dict[str, Floats]:
    """Per (submission, setting, judge) group, in group order, the model's own tokens of the
    setting's responses (the same for every judge): ``model_tokens_recorded`` is the share of
    the responses whose line records the provider's token counts, and the sums are given only
    when every response records them (NaN otherwise, and without responses).

    Args:
        usage: ``[S, 2, 4]`` per response file (:attr:`scoring.tables.load.Inputs.model_usage`),
            or None: nothing is known.
        n_judges: the judges, which repeat each (submission, setting)'s figures.
    """
    if usage is None:
        return {c: np.full(0, np.nan) for c in MODEL_TOKEN_COLUMNS}
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
    (:data:`JUDGE_COST_COLUMNS`; NaN where unknown).

    Args:
        usage: the usage table (:func:`read_usage`), or None: no figure is known.
        judges: each judge's config, for its prices (a judge without one has no cost).
        submission_ids: the scored submissions, in the scores' order.
        judge_names: the judges, in the scores' order.
    """
    n_j = len(judge_names)
    n = len(submission_ids) * len(SETTINGS) * n_j
    out = {c: np.full(n, np.nan) for c in JUDGE_COST_COLUMNS}
    if usage is None:
        return out
    sub_at = {s: i for i, s in enumerate(submission_ids)}
    setting_at = {s.value: i for i, s in enumerate(SETTINGS)}
    judge_at = {j: i for i, j in enumerate(judge_names)}
    verdicts = np.zeros(n, np.int64)
    recorded = np.zeros(n, np.int64)
    calls = np.zeros(n)
    tokens = {c: np.zeros(n) for c in ("tokens_in", "tokens_cached", "tokens_out")}
    cost = np.zeros(n)
    id_columns = ("submission_id", "setting", "judge", "source")
    ids = zip(*(usage[c].astype(str) for c in id_columns), strict=True)
    counts = usage[["n_verdicts", "calls", "tokens_in", "tokens_cached", "tokens_out"]]
    for (sub, setting, judge, source), row in zip(ids, counts.to_numpy(np.int64), strict=True):
        s, k, j = sub_at.get(sub), setting_at.get(setting), judge_at.get(judge)
        if s is None or k is None or j is None:
            continue  # a submission or judge that is not scored now
        g = (s * len(SETTINGS) + k) * n_j + j
        n_verdicts, n_calls, t_in, t_cached, t_out = (int(x) for x in row)
        verdicts[g] += n_verdicts
        mode = PRICE_MODE.get(source)
        if mode is None:
            continue
        recorded[g] += n_verdicts
        calls[g] += n_calls
        tokens["tokens_in"][g] += t_in
        tokens["tokens_cached"][g] += t_cached
        tokens["tokens_out"][g] += t_out
        config = judges.get(judge)
        usd = config.cost(mode, t_in, t_cached, t_out) if config is not None else None
        cost[g] += np.nan if usd is None else usd
    for j, name in enumerate(judge_names):
        config = judges.get(name)
        if config is None or (config.prices("direct") is None and config.prices("batch") is None):
            cost[j::n_j] = np.nan  # no prices configured: no cost, even of nothing
    full = recorded == verdicts  # also a row with nothing asked: its figures are zeros
    with np.errstate(invalid="ignore", divide="ignore"):
        out["judge_tokens_recorded"] = np.where(verdicts > 0, recorded / verdicts, np.nan)
    out["judge_calls"] = np.where(full, calls, np.nan)
    for c, total in tokens.items():
        out[f"judge_{c}"] = np.where(full, total, np.nan)
    out["judge_cost_usd"] = np.where(full, cost, np.nan)
    return out
