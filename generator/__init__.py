"""The static leaderboard site: pages generated from the score tables, built with mkdocs.

Names are imported on first use, so that reading :class:`SiteSpec` costs no charting or mkdocs
import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.spec import SiteSpec
from scoring.lazy import lazy_exports

if TYPE_CHECKING:
    from generator.build import GamutError, build_site, generate_pages
    from generator.downloads import downloads_size
    from generator.pages import tax_sentence
    from generator.registry import dataset_folder
    from generator.tables import ScoreTables, load_tables

_LAZY = {
    "ScoreTables": "generator.tables",
    "GamutError": "generator.tables",
    "build_site": "generator.build",
    "dataset_folder": "generator.registry",
    "downloads_size": "generator.downloads",
    "generate_pages": "generator.build",
    "load_tables": "generator.tables",
    "tax_sentence": "generator.pages",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


__all__ = [
    "GamutError",
    "ScoreTables",
    "SiteSpec",
    "build_site",
    "dataset_folder",
    "downloads_size",
    "generate_pages",
    "load_tables",
    "tax_sentence",
]
