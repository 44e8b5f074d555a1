"""Shared fixtures: the main two-model, two-judge project with hand-computed verdicts."""

from __future__ import annotations

from tests.tables.project import CHECKS, Project, table

# Alpha, multimodal, judge j1. By hand, per question (lambda 0.5, mu -2, weights .6/.3/.1):
#   food-1  AC (1 meets, 1 contradicts) = (1 - 2) / (1 + 2) = -1/3; V (partial) = 0.5; C = 0
#           gamut = 0.6 * -1/3 + 0.3 * 0.5 + 0.1 * 0 = -0.05
#   food-2  AC (partial) = 0.5; V (missing) = 0; no Context tier: (0.6 * 0.5) / 0.9 = 1/3
#   plant-3 AC = 1; V (baseline met) = 1; C (members: meets, missing, partial) = 1.5 / 3 = 0.5
#           gamut = 0.6 + 0.3 + 0.05 = 0.95
ALPHA_MM = table(
    [
        ("food-1", "I1", "meets"),
        ("food-1", "I2", "contradicts"),
        ("food-1", "I3", "partially_meets"),
        ("food-1", "I4", "missing"),
        ("food-2", "I1", "partially_meets"),
        ("food-2", "I2", "missing"),
        ("plant-3", "I1", "meets"),
        ("plant-3", "I2.b1", "meets"),
        ("plant-3", "I2.m1", "meets"),
        ("plant-3", "I2.m2", "missing"),
        ("plant-3", "I2.m3", "partially_meets"),
    ]
)
ALPHA_MM_QUESTIONS = {"food-1": -0.05, "food-2": 1 / 3, "plant-3": 0.95}
ALPHA_MM_GAMUT = 100 * (-0.05 + 1 / 3 + 0.95) / 3
# Judge j2 (family "zeta") is harsher on alpha only: food-1 I1 becomes missing, so food-1 scores
# AC (0 meets, 1 missing, 1 contradicts) = -2 / 3 and gamut -0.4 + 0.15 = -0.25.
ALPHA_MM_J2_GAMUT = 100 * (-0.25 + 1 / 3 + 0.95) / 3
# Beta text-only: meets on Answer-Critical checks, missing elsewhere: 0.6, 0.6 / 0.9, 0.6.
BETA_TO_GAMUT = 100 * (0.6 + 2 / 3 + 0.6) / 3
AC_CHECKS = {("food-1", "I1"), ("food-1", "I2"), ("food-2", "I1"), ("plant-3", "I1")}


def main_verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
    """The main project's verdicts (see the hand computations above)."""
    if sub == "alpha":
        if setting == "text_only":
            return "meets"
        if judge == "j2" and (qid, cid) == ("food-1", "I1"):
            return "missing"
        return ALPHA_MM[(qid, cid)]
    if setting == "multimodal":
        return "missing"
    return "meets" if (qid, cid) in AC_CHECKS else "missing"


def main_project(**overrides: object) -> Project:
    """Alpha (family acme) and beta (family bolt); judges j1 (acme, primary) and j2 (zeta)."""
    kwargs: dict[str, object] = {
        "models": {"alpha": "acme", "beta": "bolt"},
        "judges": {"j1": "acme", "j2": "zeta"},
        "verdict": main_verdict,
    }
    kwargs.update(overrides)
    return Project(**kwargs)  # type: ignore[arg-type]


assert sum(len(c) for c in CHECKS.values()) == 11
