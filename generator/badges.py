"""One SVG badge per model (``badges/<id>.svg``): its Gamut score and rank on the leaderboard
(multimodal, primary judge), for a model card to embed. Drawn here as a flat two-part label (no
font file, no script): the text is stretched to computed widths with ``textLength``, so it fits
whatever font the viewer has."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import pandas as pd

from generator.render import file_id
from generator.tables import ScoreTables
from scoring.numbers import f1
from scoring.questions import Setting
from scoring.storage import atomic_write_text

#: Average advance of the badge font (11 px Verdana-like) per character, and the padding.
CHAR_PX = 7.0
PAD_PX = 10
LABEL = "GAMUT"
LABEL_COLOUR = "#555"
#: The value's background by rank: first, on the board, not ranked.
COLOURS = {"first": "#2e7d32", "ranked": "#1565c0", "unranked": "#9e9e9e"}


@dataclass(frozen=True)
class Badge:
    """What one badge says."""

    submission_id: str
    value: str
    colour: str

    @property
    def path(self) -> str:
        """Where the badge is, from the site root."""
        return f"badges/{file_id(self.submission_id)}.svg"


def badges(tables: ScoreTables) -> list[Badge]:
    """One badge per submission on the leaderboard: the multimodal Gamut score under the primary
    judge, printed as the leaderboard prints it, and its rank (or "not ranked" for a submission
    outside the ranking, e.g. incomplete)."""
    lb = tables["leaderboard"]
    rows = lb[(lb["judge"] == tables.primary_judge) & (lb["setting"] == Setting.MULTIMODAL.value)]
    out = []
    for r in rows.sort_values("submission_id").to_dict(orient="records"):
        rank = None if pd.isna(r["rank"]) else int(r["rank"])
        value = f"{f1(r['gamut'])} · " + ("not ranked" if rank is None else f"#{rank}")
        colour = COLOURS["unranked" if rank is None else "first" if rank == 1 else "ranked"]
        out.append(Badge(str(r["submission_id"]), value, colour))
    return out


def _width(text: str) -> int:
    return round(len(text) * CHAR_PX) + PAD_PX


def svg(badge: Badge) -> str:
    """The badge as an SVG document (every text escaped)."""
    left, right = _width(LABEL), _width(badge.value)
    total = left + right
    label, value = escape(LABEL), escape(badge.value)
    title = escape(f"{LABEL} score of {badge.submission_id}: {badge.value}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{title}"><title>{title}</title>'
        f'<rect width="{left}" height="20" fill="{LABEL_COLOUR}"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{badge.colour}"/>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
        'font-size="11">'
        f'<text x="{left / 2}" y="14" textLength="{left - PAD_PX}">{label}</text>'
        f'<text x="{left + right / 2}" y="14" textLength="{right - PAD_PX}">{value}</text>'
        "</g></svg>\n"
    )


def write_badges(tables: ScoreTables, docs: Path) -> dict[str, str]:
    """Write every badge under ``docs/badges/``; returns submission id -> path from the root."""
    written = {}
    for b in badges(tables):
        path = docs / b.path
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, svg(b))
        written[b.submission_id] = b.path
    return written
