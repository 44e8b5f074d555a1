"""The computed state every table is cut from: question-level scores plus bootstrap estimates
(:func:`compute`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.scorer import TIER_ORDER, ScoringConfig
from scoring.tables.bootstrap import (
    Ask,
    Estimate,
    Ranking,
    estimate,
    rank_many,
    resample_weights,
)
from scoring.tables.core import QuestionLevel, Status, question_level
from scoring.tables.load import Inputs
from scoring.tables.matrix import SETTINGS

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Groups:
    """Decoded index arrays of the (submission, setting, judge) groups."""

    sub: Ints
    setting: Ints
    judge: Ints

    @staticmethod
    def index(s: int | Ints, setting: int | Ints, j: int | Ints, n_judges: int) -> Ints:
        """Group index of (submission, setting, judge)."""
        return np.asarray((np.asarray(s) * len(SETTINGS) + setting) * n_judges + j, np.int64)


@dataclass(frozen=True)
class Scores:
    """Everything the tables need: inputs, scoring parameters, primary judge's index, groups,
    question-level scores, the ``[B, Q]`` bootstrap weights every statistic shares, per group the
    Gamut and tier scores (100 x mean, with CIs; NaN when not complete), and per (setting, judge)
    the ranking of its complete groups with their indices."""

    inputs: Inputs
    config: ScoringConfig
    primary: int
    groups: Groups
    level: QuestionLevel
    weights: npt.NDArray[np.float64]
    gamut: Estimate
    tiers: tuple[Estimate, ...]
    rankings: dict[tuple[int, int], tuple[Ints, Ranking]]

    @property
    def complete(self) -> npt.NDArray[np.bool_]:
        """``[G]`` whether each group is complete."""
        return np.asarray(self.level.status == Status.COMPLETE)


def compute(inputs: Inputs, config: ScoringConfig, primary_judge: str) -> Scores:
    """Score every group, bootstrap every estimate and rank every (setting, judge)."""
    n_s, n_j, n_q = len(inputs.submission_ids), len(inputs.judges), len(inputs.questions)
    g = np.arange(n_s * len(SETTINGS) * n_j, dtype=np.int64)  # (s * settings + setting) * J + j
    groups = Groups(g // (len(SETTINGS) * n_j), (g // n_j) % len(SETTINGS), g % n_j)
    expected = inputs.has_responses[groups.sub, groups.setting]
    level = question_level(inputs.verdicts, inputs.checks, n_q, expected, config)
    weights = resample_weights(n_q, config.bootstrap_resamples, config.seed)
    tiers = tuple(
        estimate(weights, level.tiers[:, :, t], None, 100.0) for t in range(len(TIER_ORDER))
    )
    gamut = estimate(weights, level.gamut, scale=100.0)
    complete = level.status == Status.COMPLETE
    members = {
        (k, j): np.flatnonzero(complete & (groups.setting == k) & (groups.judge == j))
        for k in range(len(SETTINGS))
        for j in range(n_j)
    }
    # one family per judge: the compare page tests every pair of every setting at once
    asked = [Ask(gamut.value[i], gamut.boot[:, i], n_q, family=j) for (_, j), i in members.items()]
    ranked = rank_many(asked)
    rankings: dict[tuple[int, int], tuple[Ints, Ranking]] = {
        key: (idx, r) for (key, idx), r in zip(members.items(), ranked, strict=True)
    }
    return Scores(
        inputs,
        config,
        inputs.judges.index(primary_judge),
        groups,
        level,
        weights,
        gamut,
        tiers,
        rankings,
    )
