"""The benchmark workbench (``gamut-workbench``): the paper's question and rubric construction
over a private folder, ending in a versioned release (``build ...``), and the synthesiser of the
demo's data and of paper-scale projects (``demo ...``). It builds on ``scoring`` and ``gamut``;
nothing there imports it. Every LLM step goes through :mod:`workbench.llm`.
"""
