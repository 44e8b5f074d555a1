"""The cost page and the model page's cost table, from the fixture tables: one point per complete
row of the primary judge, and a sentence saying why when no row has a cost (never $0)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from generator.cost import cost_page, judging_cost_text, model_tokens_text
from generator.pages import model_names
from generator.submissions import submission_page
from generator.tables import load_tables
from scoring.numbers import usd
from tests.generator.fixture_tables import MODEL_TOKENS, ORACLE_COST, write_fixture_results


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_fixture_results(tmp_path / "results")


def _points(fig: dict[str, object]) -> dict[str, int]:
    return {t["name"]: len(t["x"]) for t in fig["data"]}  # type: ignore[attr-defined]


def test_one_point_per_complete_row_of_the_primary_judge(results: Path) -> None:
    tables = load_tables(results)
    ctx = cost_page(tables, model_names(tables))
    # 4 models in 2 settings; tiny-lm's text-only row is incomplete (no point)
    assert _points(ctx["cost_figure"]) == {"Multimodal": 4, "Text-only": 3}
    assert _points(ctx["length_figure"]) == {"Multimodal": 4, "Text-only": 3}
    assert ctx["n_cost"] == ctx["n_length"] == 7 and not ctx["no_cost"]
    mm = ctx["cost_figure"]["data"][0]
    assert sorted(mm["x"]) == sorted(v for (_, s), v in ORACLE_COST.items() if s == "multimodal")
    assert "&lt;img src=x onerror=alert(1)&gt;" in mm["text"]  # the hostile name, escaped
    layout = ctx["cost_figure"]["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("Judging cost (USD")
    assert layout["yaxis"]["title"]["text"].startswith("Gamut score")
    cells = [r.cells["cost"].value for r in ctx["table"].rows]
    assert usd(ORACLE_COST[("acme-vision-1", "multimodal")]) in cells
    assert ctx["n_model_tokens"] == 2  # acme-vision-1 in both settings
    assert _points(ctx["model_figure"]) == {"Multimodal": 1, "Text-only": 1}
    assert ctx["model_figure"]["data"][0]["x"] == [MODEL_TOKENS["acme-vision-1"][1]]


def test_no_cost_is_a_sentence_not_a_chart(results: Path) -> None:
    lb = pd.read_parquet(results / "leaderboard.parquet")
    oracle = lb["judge"] == "oracle"
    lb.loc[oracle, "judge_tokens_recorded"] = 0.0  # the primary judge replays its verdicts
    for c in ("judge_cost_usd", "judge_tokens_in", "judge_calls"):
        lb.loc[oracle, c] = None
    lb.to_parquet(results / "leaderboard.parquet")
    tables = load_tables(results)
    ctx = cost_page(tables, model_names(tables))
    assert ctx["cost_figure"] is None and ctx["n_cost"] == 0
    assert "replays stored verdicts" in ctx["no_cost"] and "oracle" in ctx["no_cost"]
    assert ctx["length_figure"] is not None  # lengths are known all the same
    texts = {r.cells["cost"].value for r in ctx["table"].rows}
    assert texts == {"not recorded (replayed verdicts)"}
    assert "$0" not in " ".join(texts)


def test_the_words_for_what_is_not_known() -> None:
    assert judging_cost_text({"judge_cost_usd": 0.0461, "judge_tokens_recorded": 1.0}) == "$0.0461"
    assert judging_cost_text({"judge_cost_usd": 12.5, "judge_tokens_recorded": 1.0}) == "$12.50"
    half = {"judge_cost_usd": None, "judge_tokens_recorded": 0.25}
    assert judging_cost_text(half) == "not recorded for 75.0% of verdicts"
    unpriced = {"judge_cost_usd": float("nan"), "judge_tokens_recorded": 1.0}
    assert judging_cost_text(unpriced) == "no prices configured"
    assert judging_cost_text({}) == "not recorded"
    assert model_tokens_text({"model_tokens_in": 52_000, "model_tokens_out": 9_100}) == (
        "52,000 in, 9,100 out"
    )
    some = {"model_tokens_in": None, "model_tokens_recorded": 0.9}
    assert model_tokens_text(some) == "not recorded for 10.0% of responses"


def test_the_model_page_has_its_cost_per_setting_and_judge(results: Path) -> None:
    tables = load_tables(results)
    ctx = submission_page(tables, "acme-vision-1", {})
    table = ctx["cost"]
    assert table.columns[0].key == "setting"  # no model column on its own page
    assert len(table.rows) == 6  # 2 settings x 3 judges
    by = {(r.cells["setting"].value, r.cells["judge"].value): r.cells for r in table.rows}
    assert by[("Multimodal", "oracle")]["cost"].value == usd(
        ORACLE_COST[("acme-vision-1", "multimodal")]
    )
    assert by[("Multimodal", "lenient")]["cost"].value == "not recorded (replayed verdicts)"
    tin, tout = MODEL_TOKENS["acme-vision-1"]
    assert by[("Text-only", "oracle")]["model_tokens"].value == f"{tin:,} in, {tout:,} out"
