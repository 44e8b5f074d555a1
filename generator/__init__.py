"""The static leaderboard site: pages generated from the score tables, built with mkdocs."""

from generator.build import SiteError, build_site, generate_pages
from generator.pages import tax_sentence
from generator.tables import ScoreTables, load_tables

__all__ = [
    "ScoreTables",
    "SiteError",
    "build_site",
    "generate_pages",
    "load_tables",
    "tax_sentence",
]
