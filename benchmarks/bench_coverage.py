"""How often every interval the site shows holds the truth, on simulated verdicts of known truth.

Each seed draws a question sample (five domains of unequal size, 42 or 1,813 questions, eight
checks each: three answer-critical, three valuable, two context, each of one of three kinds),
and for six models of known ability the true (human) verdict of every check from a latent
ability minus the question's difficulty plus noise. The judge sees the true verdict through a
known bias: on kind 1 it turns missing and partially meets into meets at 30%, and on every kind
it moves a verdict to a neighbour at 5%. The human audit is the configured kind of draw
(:func:`scoring.audit_sample.draw_sample`, a quarter of each model's questions, stratified by
model and domain), labelled without error. The truth (each model's mean question score over the
population of questions, overall and per domain, under the judge and under the humans) comes from
200,000 questions per domain.

The intervals are computed by the site's own functions (``scoring.tables``) and scored against
that truth: the Gamut score CI, the paired difference of every pair, the rank range, the tie
group (no model counted as significantly better than another it is not truly better than), the
PPI-corrected interval (for the human mean), the per-domain CI, the intervals of the judge's
agreement with the true labels (raw agreement, Cohen's kappa unweighted and linear-weighted,
macro-F1: a bootstrap over questions, every check of a question together; the truth is the
figure of the population's pooled checks), and the compare matrix's family-wise error rate under
a true null (all models equal: six and fourteen of them).

    .venv/bin/python benchmarks/bench_coverage.py [--seeds 200] [--sizes 42,1813]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.audit_sample import Response, draw_sample  # noqa: E402
from scoring.parameters import ScoringConfig  # noqa: E402
from scoring.scorer import gamut_scores, tier_scores  # noqa: E402
from scoring.tables.audit import ppi_mean  # noqa: E402
from scoring.tables.bootstrap import (  # noqa: E402
    ALPHA,
    Ask,
    coverage_ceiling,
    estimate,
    rank_many,
    resample_weights,
)
from scoring.tables.judges import agreement_intervals, confusion_figures  # noqa: E402
from scoring.tables.pairwise import paired_differences  # noqa: E402

Floats = npt.NDArray[np.float64]
#: Questions per domain at 42 questions; larger samples keep the proportions.
DOMAIN_SIZES = (4, 5, 8, 11, 14)
DOMAIN_OFFSET = (-0.3, 0.0, 0.2, 0.1, -0.1)
ABILITY = (0.9, 0.6, 0.55, 0.3, 0.0, -0.3)
TIERS = np.array([0, 0, 0, 1, 1, 1, 2, 2])  # AC, V, C of a question's eight checks
N_KINDS, BIASED_KIND = 3, 1
AUDIT_SHARE = 0.25
RESAMPLES = 1000
CFG = ScoringConfig()


def domain_sizes(n_questions: int) -> list[int]:
    """The questions of each domain, in :data:`DOMAIN_SIZES`' proportions (largest remainders)."""
    exact = [n_questions * s / sum(DOMAIN_SIZES) for s in DOMAIN_SIZES]
    out = [int(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: out[i] - exact[i])[: n_questions - sum(out)]:
        out[i] += 1
    return out


def _questions(rng: np.random.Generator, sizes: list[int]) -> tuple[Floats, npt.NDArray[np.int64]]:
    """Each question's difficulty and domain."""
    domain = np.repeat(np.arange(len(sizes)), sizes)
    return np.asarray(DOMAIN_OFFSET)[domain] + rng.normal(0, 0.8, domain.size), domain


Codes = npt.NDArray[np.int8]


def _verdicts(rng: np.random.Generator, ability: Floats, difficulty: Floats) -> tuple[Codes, Codes]:
    """True and judge verdict codes ``[M, Q, 8]`` (0 meets, 1 partial, 2 missing, 3 contradicts)."""
    latent = ability[:, None, None] - difficulty[None, :, None]
    latent = latent + rng.normal(size=(ability.size, difficulty.size, TIERS.size))
    true = np.digitize(-latent, [-0.8, -0.3, 1.0]).astype(np.int8)
    kind = rng.integers(0, N_KINDS, size=(1, difficulty.size, TIERS.size))
    judge = true.copy()
    u = rng.random(true.shape)
    judge[(kind == BIASED_KIND) & ((true == 1) | (true == 2)) & (u < 0.3)] = 0
    noise = rng.random(true.shape) < 0.05
    step = np.where(rng.random(true.shape) < 0.5, -1, 1)
    judge = np.where(noise, np.clip(judge + step, 0, 3), judge).astype(np.int8)
    true = np.asarray(true, np.int8)
    return true, judge


def _scores(v: Codes) -> Floats:
    """Question scores ``[M, Q]`` from verdict codes ``[M, Q, 8]``."""
    counts = np.stack(
        [np.stack([(v[..., t == TIERS] == c).sum(-1) for c in range(4)], -1) for t in range(3)],
        -2,
    )
    return np.asarray(gamut_scores(tier_scores(counts, CFG), CFG), np.float64)


def truth(ability: Floats, per_domain: int = 200_000) -> dict[str, Floats]:
    """Population means x100: ``judge`` and ``human`` ``[M]`` overall (domains weighed by their
    shares) and ``judge_domain`` ``[M, D]``; and the agreement figures of the judge against the
    true verdicts over the population's checks (``agreement``, ``kappa``, ... as scalars)."""
    rng = np.random.default_rng(10**6)
    judge_d = np.zeros((ability.size, len(DOMAIN_SIZES)))
    human_d = np.zeros_like(judge_d)
    confusion_d = np.zeros((len(DOMAIN_SIZES), 16))
    chunk = 20_000
    for d in range(len(DOMAIN_SIZES)):
        for _ in range(per_domain // chunk):
            difficulty = DOMAIN_OFFSET[d] + rng.normal(0, 0.8, chunk)
            true, judge = _verdicts(rng, ability, difficulty)
            human_d[:, d] += _scores(true).sum(1)
            judge_d[:, d] += _scores(judge).sum(1)
            confusion_d[d] += np.bincount((judge * 4 + true).ravel(), minlength=16)
    judge_d, human_d = 100 * judge_d / per_domain, 100 * human_d / per_domain
    share = np.asarray(DOMAIN_SIZES, np.float64) / sum(DOMAIN_SIZES)
    agreement = confusion_figures((share @ (confusion_d / per_domain)).reshape(4, 4))
    means = {"judge": judge_d @ share, "human": human_d @ share, "judge_domain": judge_d}
    return {**means, **agreement}


def _audited(rng_seed: int, n_models: int, domain: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """``[M, Q]`` the questions the configured kind of draw audits for each model."""
    responses = [
        Response(f"m{m}", "multimodal", f"q{q:05d}", f"d{domain[q]}")
        for m in range(n_models)
        for q in range(domain.size)
    ]
    drawn = draw_sample(responses, round(AUDIT_SHARE * len(responses)), rng_seed)
    out = np.zeros((n_models, domain.size), np.bool_)
    for r in drawn:
        out[int(r.submission_id[1:]), int(r.question_id[1:])] = True
    return out


def simulate(seed: int, n_questions: int, known: dict[str, Floats]) -> dict[str, list[bool]]:
    """One seed of the main scenario: interval name -> whether each of its intervals held."""
    rng = np.random.default_rng(seed)
    ability = np.asarray(ABILITY)
    sizes = domain_sizes(n_questions)
    difficulty, domain = _questions(rng, sizes)
    true_v, judge_v = _verdicts(rng, ability, difficulty)
    s_h, s_j = _scores(true_v), _scores(judge_v)
    weights = resample_weights(n_questions, RESAMPLES, CFG.seed + seed)
    est = estimate(weights, s_j, scale=100.0)
    out: dict[str, list[bool]] = defaultdict(list)
    out["score"] = list((est.lo <= known["judge"]) & (known["judge"] <= est.hi))
    d = paired_differences(est.value, est.boot, n_questions)
    true_d = known["judge"][:, None] - known["judge"][None, :]
    upper = np.triu_indices(ability.size, 1)
    out["paired difference"] = list(((d.lo <= true_d) & (true_d <= d.hi))[upper])
    (ranking,) = rank_many([Ask(est.value, est.boot, n_questions, family=0)])
    true_rank = (known["judge"][None, :] > known["judge"][:, None]).sum(1) + 1
    out["rank range"] = list((ranking.rank_lo <= true_rank) & (true_rank <= ranking.rank_hi))
    out["tie groups (all models)"] = [bool((ranking.tie_group <= true_rank).all())]
    wrong = (ranking.p_adjusted < ALPHA) & (np.sign(d.diff) != np.sign(true_d))
    out["matrix: no wrong-sign cell"] = [not wrong.any()]
    audited = _audited(seed, ability.size, domain)
    for m in range(ability.size):
        ppi = ppi_mean(s_j[m], s_h[m], audited[m], domain)
        out["PPI-corrected"].append(100 * ppi.lo <= known["human"][m] <= 100 * ppi.hi)
        out["judge CI against the human mean"].append(
            bool(est.lo[m] <= known["human"][m] <= est.hi[m])
        )
    # the judge against the true labels, every check of every model, clustered by question
    cell = (np.arange(n_questions)[None, :, None] * 4 + judge_v) * 4 + true_v
    per_q = np.bincount(cell.ravel(), minlength=n_questions * 16).reshape(n_questions, 1, 4, 4)
    for name, (lo, hi) in agreement_intervals(per_q, weights).items():
        out[f"agreement: {name}"] = [bool(lo[0] <= known[name] <= hi[0])]
    for k, size in enumerate(sizes):
        sub = estimate(weights, s_j, np.flatnonzero(domain == k), 100.0)
        held = (sub.lo <= known["judge_domain"][:, k]) & (known["judge_domain"][:, k] <= sub.hi)
        out[f"per-domain ({size} questions)"] = list(held)
    return out


def null_fwer(seed: int, n_questions: int, n_models: int) -> bool:
    """Whether the compare matrix marks any pair significant when all models are equal."""
    rng = np.random.default_rng(10**5 + seed)
    difficulty, _ = _questions(rng, domain_sizes(n_questions))
    _, judge_v = _verdicts(rng, np.zeros(n_models), difficulty)
    est = estimate(resample_weights(n_questions, RESAMPLES, CFG.seed + seed), _scores(judge_v))
    (ranking,) = rank_many([Ask(est.value, est.boot, n_questions, family=0)])
    return bool((ranking.p_adjusted < ALPHA).any())


def run(seeds: int, n_questions: int, known: dict[str, Floats]) -> dict[str, tuple[int, int]]:
    """Hits and trials of every interval (and of the null's family-wise errors) over ``seeds``."""
    tally: dict[str, list[bool]] = defaultdict(list)
    for seed in range(seeds):
        for name, held in simulate(seed, n_questions, known).items():
            tally[name] += held
        for n_models in (6, 14):
            tally[f"matrix FWER under the null, {n_models} models"].append(
                null_fwer(seed, n_questions, n_models)
            )
    return {name: (sum(v), len(v)) for name, v in tally.items()}


def main() -> None:
    """Print the coverage table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="Seeds per question-sample size.")
    ap.add_argument("--sizes", default="42,1813", help="Question-sample sizes, comma-separated.")
    args = ap.parse_args()
    t0 = time.perf_counter()
    known = truth(np.asarray(ABILITY))
    print(f"truth from 200,000 questions per domain in {time.perf_counter() - t0:.0f} s:")
    print("  judge " + ", ".join(f"{x:.2f}" for x in known["judge"]))
    print("  human " + ", ".join(f"{x:.2f}" for x in known["human"]))
    for size in (int(s) for s in args.sizes.split(",")):
        t0 = time.perf_counter()
        figures = run(args.seeds, size, known)
        print(f"\n{size} questions, {args.seeds} seeds ({time.perf_counter() - t0:.0f} s):")
        print(f"  {'interval':42} {'rate':>7} {'+-1.96 se':>10} {'trials':>7}")
        for name, (hits, trials) in figures.items():
            rate = hits / trials
            se = math.sqrt(max(rate * (1 - rate), 1e-12) / trials)
            note = ""
            if name.startswith("per-domain"):  # the most any bootstrap interval can cover
                n = int(name.split("(")[1].split()[0])
                note = f"  (ceiling {coverage_ceiling(n):.1%})" if n < 8 else ""
            print(f"  {name:42} {rate:7.1%} {1.96 * se:10.1%} {trials:7d}{note}")


if __name__ == "__main__":
    main()
