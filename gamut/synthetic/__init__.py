"""Synthetic data: the demo's models, responses and known-label verdicts, and paper-scale sets.

Run as ``gamut demo write`` (the committed demo data) or
``gamut demo paper --out DIR`` (a paper-scale project for benchmarks).
"""

from gamut.synthetic.calibration import agreement, cohen_kappa
from gamut.synthetic.compose import Composed, compose_response
from gamut.synthetic.demo import DEMO_SEED, compose_all, generate_demo, simulate_judges
from gamut.synthetic.paper import PAPER_JUDGES, PaperJudge, random_rubric, write_paper_scale
from gamut.synthetic.profiles import DEMO_MODELS, Behaviour, DemoModel

__all__ = [
    "DEMO_MODELS",
    "DEMO_SEED",
    "PAPER_JUDGES",
    "Behaviour",
    "Composed",
    "DemoModel",
    "PaperJudge",
    "agreement",
    "cohen_kappa",
    "compose_all",
    "compose_response",
    "generate_demo",
    "random_rubric",
    "simulate_judges",
    "write_paper_scale",
]
