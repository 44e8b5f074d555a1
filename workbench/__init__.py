"""The benchmark workbench, the tools that make a benchmark rather than run the leaderboard
(``gamut-workbench``): questions and rubrics built by the paper's process over a private folder,
ending in a versioned release (``gamut-workbench build ...``), and the synthesiser of the demo's
data and of paper-scale projects (:mod:`workbench.synthetic`, ``gamut-workbench demo ...``).

It builds on the leaderboard (``scoring``, ``gamut``) and nothing there imports it. Every LLM step
goes through :mod:`workbench.llm`, the one adapter to a model provider.
"""

from workbench.store import Workbench, WorkbenchError

__all__ = ["Workbench", "WorkbenchError"]
