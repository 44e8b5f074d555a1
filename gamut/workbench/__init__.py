"""The benchmark workbench (``gamut build ...``): questions and rubrics built by the paper's
process over a private folder, ending in a versioned release.

Every LLM step goes through :mod:`gamut.workbench.llm`, the one adapter to a model provider.
"""

from gamut.workbench.store import Workbench, WorkbenchError

__all__ = ["Workbench", "WorkbenchError"]
