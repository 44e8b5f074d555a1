"""What a site build needs to know, as one value the application fills in."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal


class ChangeKind(StrEnum):
    """What a change is."""

    SUBMISSION = "submission"
    RESPONSES = "responses"
    BENCHMARK = "benchmark"
    JUDGES = "judges"


@dataclass(frozen=True)
class Change:
    """One change: its kind, the commit and its time (ISO 8601), and what it concerns."""

    kind: ChangeKind
    commit: str
    when: str
    submission_id: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class History:
    """The changes, newest first, or why there are none to tell (``unavailable``)."""

    changes: tuple[Change, ...] = ()
    unavailable: str | None = None


@dataclass(frozen=True)
class SiteSpec:
    """Where a site build reads from and writes to, and how the site names itself.

    Attributes:
        root: the config file's folder (its ``mkdocs.yml`` and ``site_src/`` win over this
            checkout's).
        results: the score tables folder (``gamut score``'s output).
        out: the built site folder.
        rubrics_public: rubric, check and rationale text may appear on the site.
        questions: the public questions file.
        submissions: the submissions folder.
        title: the site's name.
        description: one sentence under the name.
        url: the deployed site's address (None: previewed locally).
        repo_url: the repository's address, linked from every page.
        demo_notice: show the demo banner even when no submission is marked demo.
        citation: the benchmark paper's BibTeX entry, shown on the Cite page.
        history: what changed (the change feed's entries; None: a feed that says it has none).
        builder: what builds the pages from mkdocs.yml: ``mkdocs`` (MkDocs 1.6) or
            ``properdocs`` (ProperDocs, MkDocs 1.x's maintained fork).
        submissions_open: the question set and the rubrics are published (False: the home and
            Submit pages say that submissions are not open yet, and what works until they are).
    """

    root: Path
    results: Path
    out: Path
    rubrics_public: bool
    questions: Path | None = None
    submissions: Path | None = None
    title: str = "GAMUT leaderboard"
    description: str = "Factual completeness of open-ended answers about images."
    url: str | None = None
    repo_url: str | None = None
    demo_notice: bool = False
    citation: str | None = None
    history: History | None = None
    builder: Literal["mkdocs", "properdocs"] = "mkdocs"
    submissions_open: bool = True
