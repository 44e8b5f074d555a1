"""Synthetic data: the demo's models, responses and known-label verdicts
(``gamut-workbench demo write``), and paper-scale projects (``gamut-workbench demo paper``)."""
