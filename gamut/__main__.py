"""``python -m gamut``: the command line."""

from gamut.cli import run

run()
