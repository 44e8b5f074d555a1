"""The scoring parameters (SPEC section 6), recorded with every result.

Kept apart from the arithmetic in :mod:`scoring.scorer` so that reading a config does not import
numpy.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scoring.rubric import Tier

TIER_ORDER: tuple[Tier, ...] = tuple(Tier)


class ScoringConfig(BaseModel):
    """Scoring parameters; the defaults are the paper's values. Recorded with every result."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    partial_credit: Annotated[float, Field(gt=0, lt=1)] = 0.5
    contradiction_penalty: Annotated[float, Field(lt=0)] = -2.0
    tier_weights: dict[Tier, Annotated[float, Field(gt=0)]] = Field(
        default_factory=lambda: {
            Tier.ANSWER_CRITICAL: 0.6,
            Tier.VALUABLE: 0.3,
            Tier.CONTEXT: 0.1,
        }
    )
    bootstrap_resamples: Annotated[int, Field(ge=100, le=100_000)] = 1000
    seed: int = 20260101

    @field_validator("tier_weights")
    @classmethod
    def _all_tiers(cls, v: dict[Tier, float]) -> dict[Tier, float]:
        if set(v) != set(Tier):
            raise ValueError(
                "tier_weights needs exactly one weight per tier: "
                + ", ".join(t.value for t in Tier)
            )
        return v

    @model_validator(mode="after")
    def _weights_sum(self) -> ScoringConfig:
        total = sum(self.tier_weights.values())
        if abs(total - 1.0) > 1e-8 + 1e-5:  # numpy.isclose's default tolerance
            raise ValueError(f"tier_weights must sum to 1 (they sum to {total:g})")
        return self
