"""The "Cite" page: BibTeX for this leaderboard as built (its address, the benchmark version, the
engine and the primary judge it reports), and the benchmark's paper as the maintainers give it
(``[site] citation`` in the config; nothing is made up when it is not given)."""

from __future__ import annotations

import re
from typing import Any

from generator.spec import SiteSpec
from generator.tables import ScoreTables

#: The paper the benchmark comes from, by title (its full entry is ``[site] citation``).
PAPER_TITLE = (
    "Two-Level Meta-Rubrics for Evaluating Open-Ended Generation: GAMUT, a Benchmark for "
    "Factual Completeness"
)


def _bib(value: str) -> str:
    """A BibTeX field value: braces and backslashes of the text cannot end the field."""
    return re.sub(r"([{}\\])", r"\\\1", value)


def cite_page(spec: SiteSpec, tables: ScoreTables) -> dict[str, Any]:
    """Context of ``cite.md``: the leaderboard's entry and the paper's (None when unknown)."""
    prov = tables.provenance
    built = str(prov.get("generated_at", ""))
    year = built[:4] if re.fullmatch(r"\d{4}", built[:4]) else None
    note = ", ".join(
        f"{label} {value}"
        for label, value in (
            ("benchmark version", prov.get("rubric_version")),
            ("engine", prov.get("engine_version")),
            ("primary judge", tables.primary_judge),
            ("built", built[:10] or None),
        )
        if value
    )
    fields = [("title", f"{{{_bib(spec.title)}}}")]
    if spec.url:
        fields.append(("howpublished", f"\\url{{{_bib(spec.url)}}}"))
    if year:
        fields.append(("year", year))
    fields.append(("note", _bib(note)))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return {
        "leaderboard": f"@misc{{gamut_leaderboard,\n{body}\n}}",
        "paper": spec.citation,
        "paper_title": PAPER_TITLE,
        "needs_url": not spec.url,
    }
