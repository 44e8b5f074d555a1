"""Synthetic data: the demo's models, responses and known-label verdicts, and paper-scale sets.

Run as ``gamut-workbench demo write`` (the committed demo data) or
``gamut-workbench demo paper --out DIR`` (a paper-scale project for benchmarks).
"""

from workbench.synthetic.calibration import agreement, cohen_kappa
from workbench.synthetic.compose import Composed, compose_response
from workbench.synthetic.demo import DEMO_SEED, compose_all, generate_demo, simulate_judges
from workbench.synthetic.paper import PAPER_JUDGES, PaperJudge, random_rubric, write_paper_scale
from workbench.synthetic.profiles import DEMO_MODELS, Behaviour, DemoModel

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
