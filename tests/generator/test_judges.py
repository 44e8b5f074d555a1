"""The judges page's agreement per check kind: its table and the sentence naming the kinds the
judges agree on least, from the fixture score tables (no site build)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from generator.judges import Kappa, judges_page, least_agreed_sentence
from generator.render import Cell, Table, fmt
from generator.tables import ScoreTables, load_tables
from scoring.tables import MIN_KIND_CHECKS
from tests.generator.fixture_tables import KIND_KAPPA, write_fixture_results


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_fixture_results(tmp_path / "results")


def _section(tables: ScoreTables, title: str) -> dict[str, Any]:
    sections: list[dict[str, Any]] = judges_page(tables)["sections"]
    return next(s for s in sections if s["title"] == title)


def _shown(table: Table) -> dict[str, dict[str, str]]:
    """Row label ("kind", or "kind (secondary)") -> column label -> the cell as displayed."""
    out = {}
    for r in table.rows:
        kind = str(r.cells["kind"].value)
        label = f"{kind} (secondary)" if r.cells["secondary"].value else kind
        out[label] = {c.label: _text(c.fmt, r.cells[c.key]) for c in table.columns}
    return out


def _text(name: str, cell: Cell) -> str:
    """A cell as the table template prints it: ``0.71 [0.66, 0.75]`` for a figure with its
    interval (the interval left out where it is missing)."""
    if name == "text":
        return str(cell.value)
    base = name.removesuffix("_ci")
    shown = fmt(base, cell.value)
    if name.endswith("_ci") and "–" not in (shown, fmt(base, cell.lo), fmt(base, cell.hi)):
        shown += f" [{fmt(base, cell.lo)}, {fmt(base, cell.hi)}]"
    return shown


def test_the_table_has_a_kappa_and_a_count_per_pair(results: Path) -> None:
    s = _section(load_tables(results), "Multimodal")
    table = s["kappa_kinds"]
    assert isinstance(table, Table) and table.caption
    shown = _shown(table)
    assert list(shown) == ["fact", "member (secondary)", "baseline", "step", "sequence"]
    k = KIND_KAPPA["sequence"]
    with_interval = f"{k:.2f} [{k - 0.08:.2f}, {k + 0.07:.2f}]"
    assert shown["sequence"]["oracle / lenient kappa"] == with_interval
    k -= 0.1
    with_interval = f"{k:.2f} [{k - 0.08:.2f}, {k + 0.07:.2f}]"
    assert shown["sequence"]["lenient / partisan kappa"] == with_interval
    assert shown["fact"]["oracle / partisan checks"] == "160"
    assert len(table.columns) == 2 + 2 * 3  # kind, secondary, then kappa and checks per pair


def test_a_kind_with_no_joint_checks_shows_the_missing_mark(results: Path) -> None:
    shown = _shown(_section(load_tables(results), "Text-only")["kappa_kinds"])
    for a, b in (("oracle", "lenient"), ("oracle", "partisan"), ("lenient", "partisan")):
        assert shown["sequence"][f"{a} / {b} kappa"] == "–"
        assert shown["sequence"][f"{a} / {b} checks"] == "0"
    assert shown["step"]["oracle / lenient kappa"] == "0.55 [0.47, 0.62]"


def test_the_sentence_names_the_least_agreed_kinds(results: Path) -> None:
    tables = load_tables(results)
    mm = str(_section(tables, "Multimodal")["least_agreed"])
    assert "agree least on sequence checks (kappa 0.31 [0.23, 0.38], lenient and partisan)" in mm
    assert "and step checks (0.45 [0.37, 0.52], lenient and partisan)" in mm
    assert mm.endswith("and most on fact checks (no pair below 0.72).")
    # text-only sequence checks have no kappa: the next two are named instead
    to = str(_section(tables, "Text-only")["least_agreed"])
    assert "least on step checks (kappa 0.45" in to and "secondary member checks (0.54" in to
    assert "sequence" not in to


def test_the_sentence_follows_the_data(results: Path) -> None:
    path = results / "judge_kappa_by_kind.parquet"
    df = pd.read_parquet(path)
    worst = (df["setting"] == "multimodal") & (df["kind"] == "baseline")
    pair = worst & (df["judge_a"] == "oracle") & (df["judge_b"] == "partisan")
    df.loc[pair, ["kappa", "kappa_lo", "kappa_hi"]] = [0.05, -0.02, 0.11]
    df.to_parquet(path)
    mm = str(_section(load_tables(results), "Multimodal")["least_agreed"])
    assert "least on baseline checks (kappa 0.05 [-0.02, 0.11], oracle and partisan)" in mm
    assert "and sequence checks (0.31 [0.23, 0.38], lenient and partisan)" in mm


def test_one_judge_pair_and_few_kinds_are_worded_plainly() -> None:
    pair = ("a", "b")
    three = [Kappa("fact", 0.8, pair), Kappa("step", 0.2, pair), Kappa("insight", 0.5, pair)]
    assert least_agreed_sentence(three, 1) == (
        "The judges agree least on step checks (kappa 0.20) and insight checks (0.50), "
        "and most on fact checks (0.80)."
    )
    assert least_agreed_sentence(three[:2], 1) == (
        "The judges agree less on step checks (kappa 0.20) than on fact checks (0.80)."
    )
    assert least_agreed_sentence(three[:1], 1) == (
        "Only one kind has enough checks judged by two judges for a kappa: fact checks "
        "(kappa 0.80)."
    )
    none = least_agreed_sentence([], 1)
    assert none.startswith("No check kind has a kappa") and str(MIN_KIND_CHECKS) in none


def test_ties_keep_the_table_order() -> None:
    pair = ("a", "b")
    kinds = [Kappa("fact", 0.5, pair), Kappa("member", 0.5, pair), Kappa("step", 0.9, pair)]
    assert "least on fact checks (kappa 0.50) and member checks" in least_agreed_sentence(kinds, 1)


def test_no_kind_has_a_kappa(results: Path) -> None:
    path = results / "judge_kappa_by_kind.parquet"
    df = pd.read_parquet(path)
    df["kappa"] = np.nan
    df.to_parquet(path)
    s = _section(load_tables(results), "Multimodal")
    assert str(s["least_agreed"]).startswith("No check kind has a kappa")
    for row in _shown(s["kappa_kinds"]).values():
        assert [v for k, v in row.items() if k.endswith("kappa")] == ["–"] * 3


def test_a_single_judge_has_no_kind_table(results: Path) -> None:
    path = results / "judge_kappa_by_kind.parquet"
    pd.read_parquet(path).iloc[0:0].to_parquet(path)
    for s in judges_page(load_tables(results))["sections"]:
        assert s["kappa_kinds"] is None and s["least_agreed"] == ""


def test_the_corrected_score_note_says_what_it_is_for_and_names_what_was_left_out() -> None:
    from generator.audit import ppi_sentence

    lb = pd.DataFrame({"audited_questions": [10, 12, 0]})
    incomplete = pd.DataFrame(
        {
            "setting": ["multimodal", "multimodal", "text_only"],
            "submission_id": ["m1", "m1", "m2"],
            "question_id": ["food-3", "plant-9", "food-1"],
            "n_checks": [5, 7, 4],
            "n_final": [4, 6, 0],
        }
    )
    text = ppi_sentence(lb, False, incomplete, {"m1": "Model One"})
    assert "(10 to 12 per row)" in text
    assert "for the mean over the population of questions" in text
    assert "Model One (Multimodal): food-3, plant-9; m2 (Text-only): food-1." in text
    assert "Left out" not in ppi_sentence(lb, False, incomplete.iloc[:0])


def _rows(table: Table, key: str) -> dict[str, dict[str, Cell]]:
    return {str(r.cells[key].value): r.cells for r in table.rows}


def test_the_sentences_print_the_figures_of_the_tables_beside_them(results: Path) -> None:
    for title in ("Multimodal", "Text-only"):
        s = _section(load_tables(results), title)
        claims = " ".join(s["claims"])
        partisan = _rows(s["self_pref"], "judge")["partisan"]
        assert f"its self-preference is {_text('signed_ci', partisan['sp'])}" in claims
        alone = _text("signed_ci", partisan["spp"])
        assert f"({alone} against the primary judge oracle alone)" in claims
        offset = _rows(s["leniency"], "judge")["lenient"]["offset"]
        value, interval = _text("signed_ci", offset).split(" ", 1)
        assert f"on average, {value.lstrip('+')} points higher than the primary judge" in claims
        assert f"(95% CI of the difference {interval})" in claims


def test_a_difference_that_prints_as_zero_reads_as_no_difference(results: Path) -> None:
    path = results / "judge_self_preference.parquet"
    df = pd.read_parquet(path)
    mine = df["judge"] == "partisan"
    df.loc[mine, ["own_minus_others", "self_preference", "self_preference_lo"]] = [
        -0.03, -0.04, -3.0]  # fmt: skip
    df.loc[mine, ["self_preference_primary", "self_preference_primary_lo"]] = [0.02, -2.0]
    df.to_parquet(path)
    s = _section(load_tables(results), "Multimodal")
    claims = " ".join(s["claims"])
    partisan = _rows(s["self_pref"], "judge")["partisan"]
    assert _text("signed", partisan["diff"]) == "0.0"
    assert _text("signed_ci", partisan["sp"]) == "0.0 [-3.0, +9.5]"
    assert "models (aurora) about the same as the other judges score them (no difference" in claims
    assert "its self-preference is 0.0 [-3.0, +9.5]" in claims
    assert "primary judge oracle alone" not in claims  # it prints the same: said once
    assert "0.0 points" not in claims and "+0.0" not in claims and "-0.0" not in claims


def test_the_gap_sentence_and_the_gap_column_print_the_same_figures(results: Path) -> None:
    import json

    from generator.pages import multimodal

    mod = pd.read_parquet(results / "modality.parquet")
    first = mod.index[mod["judge"] == "oracle"][0]
    mod.loc[first, "gap"] = -0.03
    mod.to_parquet(results / "modality.parquet")
    summary_path = results / "modality_summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    gaps = mod[mod["judge"] == "oracle"]["gap"]
    summary["oracle"].update(min_gap=float(gaps.min()), max_gap=float(gaps.max()))
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
    ctx = multimodal(load_tables(results))
    shown = [_text("signed", r.cells["gap"]) for r in ctx["table"].rows]
    assert "0.0" in shown and "+0.0" not in shown and "-0.0" not in shown
    low, high = min(shown, key=float), max(shown, key=float)
    assert f"ranges from {low} to {high}" in ctx["sentence"]
    assert ctx["sentence"].startswith("None of the 4 models scores lower (at this precision)")
