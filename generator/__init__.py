"""The static leaderboard site: pages generated from the score tables, built with mkdocs.

Names are imported on first use, so that reading :class:`SiteSpec` costs no charting or mkdocs
import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from generator.spec import SiteSpec

if TYPE_CHECKING:
    from generator.build import SiteError, build_site, generate_pages
    from generator.downloads import downloads_size
    from generator.pages import tax_sentence
    from generator.tables import ScoreTables, load_tables

_LAZY = {
    "ScoreTables": "generator.tables",
    "SiteError": "generator.tables",
    "build_site": "generator.build",
    "downloads_size": "generator.downloads",
    "generate_pages": "generator.build",
    "load_tables": "generator.tables",
    "tax_sentence": "generator.pages",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'generator' has no attribute {name!r}")


__all__ = [
    "ScoreTables",
    "SiteError",
    "SiteSpec",
    "build_site",
    "downloads_size",
    "generate_pages",
    "load_tables",
    "tax_sentence",
]
