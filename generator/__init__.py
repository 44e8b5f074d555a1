"""The static leaderboard site: pages generated from the score tables, built with mkdocs.

Names are imported on first use, so that reading :class:`SiteSpec` costs no charting or mkdocs
import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.spec import SiteSpec
from scoring.lazy import lazy_exports

if TYPE_CHECKING:
    from generator.build import build_site
    from generator.downloads import downloads_size
    from generator.registry import dataset_folder

_LAZY = {
    "build_site": "generator.build",
    "dataset_folder": "generator.registry",
    "downloads_size": "generator.downloads",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


__all__ = ["SiteSpec", "build_site", "dataset_folder", "downloads_size"]
