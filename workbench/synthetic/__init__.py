"""Synthetic data: the demo's models, responses and known-label verdicts, and paper-scale sets.

Run as ``gamut-workbench demo write`` (the committed demo data) or
``gamut-workbench demo paper --out DIR`` (a paper-scale project for benchmarks).
"""

from workbench.synthetic.calibration import agreement
from workbench.synthetic.demo import generate_demo
from workbench.synthetic.paper import write_paper_scale

__all__ = ["agreement", "generate_demo", "write_paper_scale"]
