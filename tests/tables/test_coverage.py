"""The coverage study of ``benchmarks/bench_coverage.py`` in small: 40 seeds at 42 questions.

With 240 model intervals per figure (six a seed, correlated within a seed), a true 95% coverage
reads 95% +- about 4 points; the bounds below are wide enough for that and narrow enough to catch
an interval that misses its target badly (the unadjusted matrix's 45% family-wise error with six
models, or a corrected score that ignores the audit's weights).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import bench_coverage as bench

SEEDS = 40


@pytest.fixture(scope="module")
def figures() -> dict[str, float]:
    known = bench.truth(np.asarray(bench.ABILITY), per_domain=20_000)
    return {name: hits / trials for name, (hits, trials) in bench.run(SEEDS, 42, known).items()}


@pytest.mark.parametrize("interval", ["score", "paired difference", "PPI-corrected"])
def test_the_sites_intervals_hold_the_truth_about_95_percent_of_the_time(
    figures: dict[str, float], interval: str
) -> None:
    assert 0.86 <= figures[interval] <= 1.0


def test_rank_ranges_and_tie_groups_hold(figures: dict[str, float]) -> None:
    assert figures["rank range"] >= 0.9
    assert figures["tie groups (all models)"] >= 0.85


def test_the_compare_matrix_keeps_its_family_wise_error(figures: dict[str, float]) -> None:
    assert figures["matrix FWER under the null, 6 models"] <= 0.15
    assert figures["matrix FWER under the null, 14 models"] <= 0.15
    assert figures["matrix: no wrong-sign cell"] >= 0.9


@pytest.mark.parametrize("figure", ["agreement", "kappa", "kappa_linear", "macro_f1"])
def test_the_agreement_intervals_hold_the_populations_figure(
    figures: dict[str, float], figure: str
) -> None:
    # one interval a seed: 95% reads 95 +- about 7 points over 40 seeds
    assert 0.8 <= figures[f"agreement: {figure}"] <= 1.0
