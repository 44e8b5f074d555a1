"""Synthetic data: the demo's models, responses and known-label verdicts, and paper-scale sets.

Run as ``python -m scoring.synthetic demo`` (the committed demo data) or
``python -m scoring.synthetic paper --out DIR`` (a paper-scale project for benchmarks).
"""

from scoring.synthetic.paper import PAPER_JUDGES, PaperJudge, random_rubric, write_paper_scale

__all__ = ["PAPER_JUDGES", "PaperJudge", "random_rubric", "write_paper_scale"]
