"""The leaderboard's judging cost: the usage table priced by hand, replayed verdicts shown as not
recorded (never $0), and a usage table that does not belong to the verdict table refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError
from scoring.judge.spec import JudgeConfig
from scoring.judge.usage import USAGE_COLUMNS, USAGE_TABLE
from scoring.tables.cost import JUDGE_COST_COLUMNS, judging_cost, read_usage
from scoring.verdicts import FINGERPRINT
from tests.tables.conftest import main_project

PRICED = JudgeConfig(
    provider="openai",
    model="m",
    family="f",
    price_in_per_mtok=2.0,
    price_cached_in_per_mtok=0.5,
    price_out_per_mtok=8.0,
    batch_price_in_per_mtok=1.0,
    batch_price_out_per_mtok=4.0,
)
UNPRICED = JudgeConfig(provider="openai", model="m", family="f")


def _usage(rows: list[tuple[str, str, str, str, int, int, int, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(USAGE_COLUMNS))


def _group(s: int, setting: int, j: int, n_judges: int = 2) -> int:
    return (s * 2 + setting) * n_judges + j


def test_cost_per_row_is_the_hand_computation() -> None:
    usage = _usage(
        [
            # alpha multimodal, judge "p": direct calls and a provider batch
            ("alpha", "multimodal", "p", "direct", 10, 12, 30_000, 20_000, 600),
            ("alpha", "multimodal", "p", "batch", 5, 5, 10_000, 0, 300),
            # alpha text-only, judge "p": an imported batch file (batch prices)
            ("alpha", "text_only", "p", "import", 4, 4, 8_000, 2_000, 200),
            # beta multimodal, judge "p": one verdict replayed among recorded ones
            ("beta", "multimodal", "p", "direct", 3, 3, 3_000, 0, 90),
            ("beta", "multimodal", "p", "replay", 1, 1, 0, 0, 0),
            # alpha multimodal, judge "u": recorded, but no prices configured
            ("alpha", "multimodal", "u", "direct", 2, 2, 1_000, 0, 50),
            # a submission that is not scored now: ignored
            ("gone", "multimodal", "p", "direct", 9, 9, 9, 9, 9),
        ]
    )
    out = judging_cost(usage, {"p": PRICED, "u": UNPRICED}, ("alpha", "beta"), ("p", "u"))
    assert set(out) == set(JUDGE_COST_COLUMNS)
    g = _group(0, 0, 0)
    # direct: 10,000 uncached at $2, 20,000 cached at $0.5, 600 out at $8; batch: 10,000 at $1
    # (no batch cached price: the batch input price) and 300 out at $4
    by_hand = (10_000 * 2 + 20_000 * 0.5 + 600 * 8 + 10_000 * 1 + 300 * 4) / 1e6
    assert out["judge_cost_usd"][g] == pytest.approx(by_hand) and by_hand == pytest.approx(0.046)
    assert (out["judge_calls"][g], out["judge_tokens_in"][g]) == (17, 40_000)
    assert (out["judge_tokens_cached"][g], out["judge_tokens_out"][g]) == (20_000, 900)
    assert out["judge_tokens_recorded"][g] == 1.0
    g = _group(0, 1, 0)
    assert out["judge_cost_usd"][g] == pytest.approx((6_000 * 1 + 2_000 * 1 + 200 * 4) / 1e6)
    g = _group(1, 0, 0)  # a replayed verdict: no figure at all, and the share says why
    assert out["judge_tokens_recorded"][g] == pytest.approx(0.75)
    assert all(math.isnan(out[c][g]) for c in JUDGE_COST_COLUMNS if c != "judge_tokens_recorded")
    g = _group(0, 0, 1)  # tokens, but no prices
    assert out["judge_tokens_in"][g] == 1_000 and math.isnan(out["judge_cost_usd"][g])
    g = _group(1, 1, 0)  # beta text-only: nothing judged, nothing asked: zero calls, $0
    assert math.isnan(out["judge_tokens_recorded"][g])
    assert (out["judge_calls"][g], out["judge_cost_usd"][g]) == (0, 0)


def test_replayed_verdicts_are_not_recorded_rather_than_free() -> None:
    usage = _usage([("alpha", "multimodal", "p", "replay", 11, 11, 0, 0, 0)])
    out = judging_cost(usage, {"p": PRICED}, ("alpha",), ("p",))
    assert out["judge_tokens_recorded"][0] == 0.0
    assert np.isnan(out["judge_cost_usd"][0]) and np.isnan(out["judge_tokens_in"][0])
    none = judging_cost(None, {"p": PRICED}, ("alpha",), ("p",))
    assert all(np.isnan(v).all() for v in none.values())


def test_the_leaderboard_has_the_columns_and_a_stale_usage_table_is_refused(
    tmp_path: Path,
) -> None:
    config = main_project().write(tmp_path)
    results = tmp_path / "results"
    verdicts = results / "verdicts.parquet"
    table = pq.read_table(verdicts)
    pq.write_table(table.replace_schema_metadata({FINGERPRINT: b"abc"}), verdicts)
    rows = [
        ("alpha", "multimodal", "j1", "direct", 11, 11, 11_000, 0, 550),
        ("beta", "multimodal", "j1", "replay", 11, 11, 0, 0, 0),
    ]
    usage = pa.Table.from_pandas(_usage(rows), preserve_index=False)
    pq.write_table(usage.replace_schema_metadata({FINGERPRINT: b"abc"}), results / USAGE_TABLE)
    lb = pipeline.score(Project(load_config(config))).leaderboard
    assert set(JUDGE_COST_COLUMNS) <= set(lb.columns)
    row = lb[(lb.submission_id == "alpha") & (lb.setting == "multimodal") & (lb.judge == "j1")]
    # the main project's judges are replay judges without prices: tokens, but no cost
    assert int(row["judge_tokens_in"].iloc[0]) == 11_000 and row["judge_cost_usd"].isna().all()
    beta = lb[(lb.submission_id == "beta") & (lb.setting == "multimodal") & (lb.judge == "j1")]
    assert beta["judge_tokens_recorded"].iloc[0] == 0.0 and beta["judge_tokens_in"].isna().all()
    assert str(lb["judge_tokens_in"].dtype) == "Int64"
    pq.write_table(usage.replace_schema_metadata({FINGERPRINT: b"old"}), results / USAGE_TABLE)
    with pytest.raises(GamutError, match="another verdict table"):
        read_usage(results / USAGE_TABLE, verdicts)
    with pytest.raises(GamutError, match="gamut judge"):
        pipeline.score(Project(load_config(config)))


def test_model_tokens_where_every_response_records_them(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    subs = tmp_path / "submissions"

    def with_usage(path: Path, every: bool) -> tuple[int, int]:
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        for i, x in enumerate(lines):
            if every or i:
                x["usage"] = {"input_tokens": 100 + i, "output_tokens": 10 * (i + 1)}
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        return sum(100 + i for i in range(len(lines))), sum(10 * (i + 1) for i in range(3))

    tin, tout = with_usage(subs / "alpha" / "multimodal.jsonl", every=True)
    with_usage(subs / "beta" / "multimodal.jsonl", every=False)  # the first line has none
    lb = pipeline.score(Project(load_config(config))).leaderboard
    alpha = lb[(lb.submission_id == "alpha") & (lb.setting == "multimodal")]
    assert len(alpha) == 2  # one row per judge, the same model tokens in each
    assert set(alpha["model_tokens_in"]) == {tin} and tin == 303
    assert set(alpha["model_tokens_out"]) == {tout} and tout == 60
    assert set(alpha["model_tokens_recorded"]) == {1.0}
    beta = lb[(lb.submission_id == "beta") & (lb.setting == "multimodal")]
    assert beta["model_tokens_recorded"].iloc[0] == pytest.approx(2 / 3)
    assert beta["model_tokens_in"].isna().all() and beta["model_tokens_out"].isna().all()
    text = lb[lb.setting == "text_only"]
    assert (text["model_tokens_recorded"] == 0.0).all() and text["model_tokens_in"].isna().all()
