"""Verdicts into tier scores and a Gamut score (docs/contract.md §6). Pure arithmetic, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.compiler import Check
from scoring.errors import GamutError
from scoring.parameters import TIER_ORDER, ScoringConfig
from scoring.rubric import Tier
from scoring.verdicts import VERDICT_ORDER, Verdict


@dataclass(frozen=True)
class QuestionScore:
    """One question's tier scores (only the tiers present) and its Gamut score, both in [-1, 1]."""

    question_id: str
    tiers: dict[Tier, float]
    gamut: float


def tier_scores(
    counts: npt.NDArray[np.int64] | npt.NDArray[np.float64], config: ScoringConfig
) -> npt.NDArray[np.float64]:
    """Tier scores ``(M + lambda*P + mu*C) / (M + P + S - mu*C)`` from counts whose last axis is
    (M, P, S, C); NaN where a tier has no checks."""
    c = np.asarray(counts, dtype=np.float64)
    m, p, s, x = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    lam, mu = config.partial_credit, config.contradiction_penalty
    num = m + lam * p + mu * x
    den = m + p + s - mu * x
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def gamut_scores(tiers: npt.NDArray[np.float64], config: ScoringConfig) -> npt.NDArray[np.float64]:
    """Weighted average over the last axis (tiers in :data:`TIER_ORDER`), NaN tiers left out and
    the present tiers' weights renormalised to 1. NaN where no tier is present."""
    weights = np.array([config.tier_weights[t] for t in TIER_ORDER], dtype=np.float64)
    w = np.broadcast_to(weights, tiers.shape)
    present = ~np.isnan(tiers)
    wsum = np.where(present, w, 0.0).sum(axis=-1)
    total = np.where(present, tiers * w, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(wsum > 0, total / np.where(wsum > 0, wsum, 1.0), np.nan)


def _parse_verdict(value: Verdict | str, check_id: str, question_id: str) -> Verdict:
    try:
        return Verdict(value)
    except ValueError:
        allowed = ", ".join(v.value for v in Verdict)
        raise GamutError(
            f"question {question_id}, check {check_id}: unknown verdict {value!r} "
            f"(allowed: {allowed})"
        ) from None


def score_question(
    checks: Sequence[Check],
    verdicts: Mapping[str, Verdict | str],
    config: ScoringConfig | None = None,
) -> QuestionScore:
    """Score one response to one question from its verdicts by check id (paper's values by default).

    Raises:
        GamutError: a check lacks a verdict, a verdict is unknown or names no check, or no checks.
    """
    cfg = config or ScoringConfig()
    if not checks:
        raise GamutError("cannot score a question with no checks")
    qid = checks[0].question_id
    missing = [c.check_id for c in checks if c.check_id not in verdicts]
    if missing:
        raise GamutError(
            f"question {qid}: {len(missing)} check(s) have no verdict: {', '.join(missing)} "
            "(judge them first; a check without a verdict is never scored as missing)"
        )
    known = {c.check_id for c in checks}
    extra = sorted(set(verdicts) - known)
    if extra:
        raise GamutError(
            f"question {qid}: verdicts for unknown check(s): {', '.join(extra)} "
            "(the rubric changed since judging; re-judge)"
        )
    counts = np.zeros((len(TIER_ORDER), len(VERDICT_ORDER)), dtype=np.int64)
    for c in checks:
        v = _parse_verdict(verdicts[c.check_id], c.check_id, qid)
        counts[TIER_ORDER.index(c.tier), v.code] += 1
    per_tier = tier_scores(counts, cfg)
    gamut = float(gamut_scores(per_tier, cfg))
    tiers = {t: float(per_tier[i]) for i, t in enumerate(TIER_ORDER) if not np.isnan(per_tier[i])}
    return QuestionScore(question_id=qid, tiers=tiers, gamut=gamut)


__all__ = [
    "TIER_ORDER",
    "QuestionScore",
    "ScoringConfig",
    "gamut_scores",
    "score_question",
    "tier_scores",
]
