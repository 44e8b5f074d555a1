"""Question scores from the dense verdict matrix (docs/contract.md §6), with the tier formula
and weighted average of :mod:`scoring.scorer`. Pure arithmetic, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from scoring.scorer import TIER_ORDER, ScoringConfig, gamut_scores, tier_scores
from scoring.tables.checks import CheckIndex
from scoring.tables.matrix import MISSING
from scoring.verdicts import VERDICT_ORDER

N_TIERS = len(TIER_ORDER)
N_VERDICTS = len(VERDICT_ORDER)


class Status(IntEnum):
    """State of one (submission, setting, judge) group."""

    ABSENT = 0  # no response file for this setting: no row anywhere
    COMPLETE = 1
    INCOMPLETE = 2


@dataclass(frozen=True)
class QuestionLevel:
    """Per group ``[G]``: :class:`Status` codes and checks with a verdict; per group and
    question (:func:`scored`): verdict counts, tier scores and Gamut scores, NaN where the group
    is not complete."""

    status: npt.NDArray[np.int8]
    n_judged: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    tiers: npt.NDArray[np.float64]
    gamut: npt.NDArray[np.float64]


def count_verdicts(
    verdicts: npt.NDArray[np.int8], key: npt.NDArray[np.int64], n_keys: int
) -> npt.NDArray[np.int64]:
    """``[G, n_keys, verdicts]`` verdict counts per (group, key) of ``[G, K]`` verdict codes
    (:data:`MISSING` not counted), each check mapping to its ``key`` in ``range(n_keys)``."""
    n_groups = verdicts.shape[0]
    out = np.zeros((n_groups, n_keys, N_VERDICTS), np.int64)
    if key.size == 0 or n_groups == 0:
        return out
    # One bincount per group over (key, verdict) cells, with a slot per key for MISSING (-1):
    # a group's row and its counts stay in the processor's cache, where one bincount over every
    # group (or a one-hot sum) streams arrays of 8 bytes per verdict through memory.
    width = N_VERDICTS + 1
    cell = key.astype(np.int64) * width - MISSING  # a verdict v goes to slot v - MISSING
    for g in range(n_groups):
        counts = np.bincount(cell + verdicts[g], minlength=n_keys * width)
        out[g] = counts.reshape(n_keys, width)[:, 1:]
    return out


def scored(
    verdicts: npt.NDArray[np.int8], checks: CheckIndex, n_questions: int, config: ScoringConfig
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Counts ``[G, Q, tiers, verdicts]``, tier scores ``[G, Q, tiers]`` (NaN where the question
    has no check of the tier) and question Gamut scores ``[G, Q]`` of ``[G, K]`` verdicts."""
    key = checks.question * N_TIERS + checks.tier
    counts = count_verdicts(verdicts, key, n_questions * N_TIERS)
    counts = counts.reshape(verdicts.shape[0], n_questions, N_TIERS, N_VERDICTS)
    present = np.bincount(key, minlength=n_questions * N_TIERS).reshape(n_questions, N_TIERS) > 0
    tiers = tier_scores(counts, config)
    tiers[:, ~present] = np.nan
    return counts, tiers, gamut_scores(tiers, config)


def question_level(
    verdicts: npt.NDArray[np.int8],
    checks: CheckIndex,
    n_questions: int,
    expected: npt.NDArray[np.bool_],
    config: ScoringConfig,
) -> QuestionLevel:
    """Tier and Gamut scores of every (group, question); a group with an expected check lacking
    a verdict is :attr:`Status.INCOMPLETE` and NaN: a missing verdict never scores as missing."""
    n_judged = (verdicts != MISSING).sum(axis=1).astype(np.int64)
    complete = n_judged == verdicts.shape[1]
    status = np.where(
        ~expected, Status.ABSENT, np.where(complete, Status.COMPLETE, Status.INCOMPLETE)
    ).astype(np.int8)
    counts, tiers, gamut = scored(verdicts, checks, n_questions, config)
    incomplete = status != Status.COMPLETE
    tiers[incomplete] = np.nan
    gamut[incomplete] = np.nan
    return QuestionLevel(status, n_judged, counts, tiers, gamut)
