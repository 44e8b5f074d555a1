"""The judges page's claim sentences, each worded from the tables whichever way the data goes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from generator.claims import judge_claims

NAMES = {"m1": "Model One", "m2": "Model Two", "m3": "Model Three"}


@dataclass
class FakeTables:
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    primary_judge: str = "a"


def tables(tau: float, lenient_lo: float, moves: list[int]) -> FakeTables:
    mm = "multimodal"
    scores = [50.0, 40.0, 30.0]
    b = [s + lenient_lo + i for i, s in enumerate(scores)]
    js = pd.DataFrame(
        {
            "setting": mm,
            "submission_id": ["m1", "m2", "m3"] * 2,
            "judge": ["a"] * 3 + ["b"] * 3,
            "gamut": scores + b,
        }
    )
    return FakeTables(
        {
            "judge_tau": pd.DataFrame(
                [
                    {
                        "setting": mm,
                        "judge_a": "a",
                        "judge_b": "b",
                        "tau_b": tau,
                        "max_abs_diff": lenient_lo + 2,
                        "max_diff_submission": "m3",
                    }
                ]
            ),
            "judge_scores": js,
            "judge_leniency": pd.DataFrame(
                {"setting": mm, "judge": ["a", "b"], "offset": [0.0, lenient_lo + 1]}
            ),
            "judge_self_preference": pd.DataFrame(
                [
                    {
                        "setting": mm,
                        "judge": "b",
                        "family": "bee",
                        "n_own": 1,
                        "own_minus_others": -0.26,
                    }
                ]
            ),
            "rank_sensitivity": pd.DataFrame(
                {
                    "setting": mm,
                    "submission_id": ["m1", "m2", "m3"] * 2,
                    "judge": ["a"] * 3 + ["b"] * 3,
                    "compared": True,
                    "rank": [1, 2, 3] + [1 + i + m for i, m in enumerate(moves)],
                    "rank_change": [0, 0, 0, *moves],
                    "max_rank_change": [abs(m) for m in moves] * 2,
                }
            ),
        }
    )


def test_identical_rankings_a_uniformly_lenient_judge_and_adjacent_swaps() -> None:
    claims = judge_claims(tables(1.0, 3.0, [1, -1, 0]), "multimodal", NAMES)
    assert claims[0] == (
        "Judges a and b give identical rankings; the largest per-model score difference "
        "between them is 5.0 points (Model Three)."
    )
    assert (
        claims[1]
        == "b scores its own family's models (bee) 0.3 points lower than the other judges "
        "score them."
    )
    assert claims[2] == (
        "The most lenient judge, b, scores the models, on average, 4.0 points higher than the "
        "primary judge a; it scores every model higher, by 3.0 to 5.0 points."
    )
    assert claims[3].startswith("Only adjacent swaps occur")


def test_different_rankings_a_mixed_judge_and_a_long_move_are_said_as_they_are() -> None:
    claims = judge_claims(tables(0.3333, -2.0, [0, 2, -2]), "multimodal", NAMES)
    assert "rank the models differently (Kendall tau-b 0.33)" in claims[0]
    assert (
        "on average, 1.0 points lower than the primary judge a; per model from -2.0 to 0.0"
        in (claims[2])
    )
    assert claims[2].endswith("points: not uniformly higher.")
    assert (
        claims[3]
        == "Not only adjacent swaps: Model Two is ranked 2 by a and 4 by b, 2 places apart."
    )
    assert judge_claims(tables(1.0, 1.0, [0, 0, 0]), "multimodal", NAMES)[3] == (
        "Every judge ranks these models in the same order."
    )
    assert judge_claims(tables(1.0, 1.0, [0, 0, 0]), "text_only", NAMES) == []


def test_rank_table_puts_each_judges_rank_beside_the_primarys() -> None:
    from generator.claims import rank_table

    t = tables(1.0, 1.0, [0, 1, -1])
    rs = t.frames["rank_sensitivity"]
    both = rs.assign(
        rank=pd.array([1, 2, 3, 1, 3, pd.NA], dtype="Int64"),
        primary_rank=pd.array([1, 2, 3, 1, 2, 3], dtype="Int64"),
        max_rank_change=pd.array([0, 1, 1, 0, 1, 1], dtype="Int64"),
    )
    t.frames["rank_sensitivity"] = both
    table = rank_table(t, "multimodal", NAMES)
    assert [c.key for c in table.columns] == ["model", "j_a", "j_b", "max"]
    assert [r.cells["model"].value for r in table.rows] == ["Model One", "Model Two", "Model Three"]
    assert [r.cells["j_b"].value for r in table.rows][:2] == [1, 3]
    assert table.rows[2].cells["j_b"].value is None  # not ranked by b: a dash
    assert rank_table(t, "text_only", NAMES) is None
