"""``python -m workbench``: the ``gamut-workbench`` command line."""

from workbench.cli import run

run()
