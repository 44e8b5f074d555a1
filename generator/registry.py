"""The site's pages, in one list: each page's file, template, navigation entry, the score tables
it reads and when the site has it.

The pages written, the navigation (in this order) and the hand-written pages' place in it all
derive from :data:`PAGES`. docs/adding-a-page.md says how to add a page.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import pages
from generator.badges import write_badges
from generator.cite import cite_page
from generator.compare import compare_page, write_compare_data
from generator.cost import cost_page
from generator.croissant import write_croissant
from generator.downloads import (
    CARD_STAGING,
    RESPONSES,
    Download,
    dataset_card,
    read_responses_download,
    responses_download,
    write_downloads,
)
from generator.explorer import copy_images
from generator.feed import write_feed
from generator.inputs import SiteInputs, load_site_inputs
from generator.judges import judges_page
from generator.judging import JUDGING, judges_by_prompt, judging_context
from generator.published import PUBLISHED, link_site_data, write_site_data
from generator.render import file_id, human, slug
from generator.spec import History, SiteSpec
from generator.submissions import highlights, submission_page
from generator.tables import ScoreTables, load_tables
from scoring.errors import GamutError
from scoring.questions import Question, load_questions

#: One page of a family: its key (the ``{}`` of the family's path), title and template variables.
Item = tuple[str, str, dict[str, Any]]


@dataclass(frozen=True)
class Site:
    """What the pages are built from and share (docs/adding-a-page.md, step 3): ``docs`` is the
    folder being filled; ``names`` maps submission ids to model names and ``shown`` the ranked
    ones, in rank order; ``downloads`` is what :func:`write_downloads` returns; ``explorer`` the
    explorer page's figures."""

    spec: SiteSpec
    tables: ScoreTables
    docs: Path
    names: dict[str, str]
    shown: dict[str, str]
    inputs: SiteInputs
    downloads: dict[str, Any]
    explorer: dict[str, Any]

    def by_name(self) -> list[str]:
        """The submission ids in the order of their names."""
        return sorted(self.names, key=lambda s: self.names[s].lower())


def gather(spec: SiteSpec, tables: ScoreTables, docs: Path) -> Site:
    """Link (or else write) the site data (:mod:`generator.published`), read the questions and
    responses, copy the images, and write the downloads and the staged dataset card.

    Raises:
        GamutError: the spec names no questions file or submissions folder.
    """
    questions, submissions = _paths(spec)
    public = spec.rubrics_public
    page = link_site_data(tables, questions, submissions, public, docs)
    linked = read_responses_download(docs / RESPONSES) if page is not None else None
    inputs = load_site_inputs(questions, submissions, tables, responses=linked)
    if page is None:  # the score step's copy is missing or was made from other inputs
        page = write_site_data(tables, inputs, docs, public)
    copy_images(inputs.questions, questions, docs)
    dl = write_dataset(spec, tables, docs, inputs.questions, docs / CARD_STAGING)
    names, shown = pages.model_names(tables), pages.shown_names(tables)
    return Site(spec, tables, docs, names, shown, inputs, dl, page)


def _paths(spec: SiteSpec) -> tuple[Path, Path]:
    """The questions file and the submissions folder the site shows."""
    if spec.questions is None or spec.submissions is None:
        raise GamutError(
            "the site shows every question and response: give the build the questions file "
            "and the submissions folder (SiteSpec.questions, SiteSpec.submissions)"
        )
    return spec.questions, spec.submissions


def write_dataset(
    spec: SiteSpec,
    tables: ScoreTables,
    docs: Path,
    questions: list[Question],
    card: Path,
    repo: str | None = None,
) -> dict[str, Any]:
    """Write the downloads folder (``docs/downloads``: every table, the questions, the Every Eval
    Ever export and the Croissant description, beside the site data's response and verdict
    files already there) and its dataset card at ``card``.

    Returns:
        The downloads, as :func:`write_downloads` returns them.
    """
    public = spec.rubrics_public
    dl = write_downloads(tables, docs, public=public, questions=questions)
    main: list[Download] = dl["main"]  # type: ignore[assignment]
    main.insert(2, responses_download(docs))
    listed = [d for d in (dl["verdicts"], *main) if isinstance(d, Download)]
    prov = next(d for d in listed if d.name == "provenance")
    about = {"title": spec.title, "description": spec.description}
    jsonld = write_croissant(listed, docs / "downloads", tables.provenance, url=spec.url or "",
                             **about)  # fmt: skip
    prov.files.append(("JSON-LD, Croissant", f"downloads/{jsonld.name}", jsonld.stat().st_size))
    prov.files.append(("Markdown, the dataset card", "downloads/README.md", 0))
    text = dataset_card(listed, tables.provenance, public=public, repo=repo, url=spec.url or "",
                        **about)  # fmt: skip
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text(text, encoding="utf-8")
    prov.files[-1] = (*prov.files[-1][:2], card.stat().st_size)
    return dl


def dataset_folder(spec: SiteSpec, out: Path, repo: str) -> Path:
    """Write the downloads folder of ``spec``'s results into ``out``, with its dataset card as
    ``README.md`` naming the Hub dataset ``repo``: the files ``gamut publish hf`` sends.

    Returns:
        The folder (``out/downloads``).

    Raises:
        GamutError: the score step's verdict and response files are missing or out of date.
    """
    tables, (questions, submissions) = load_tables(spec.results), _paths(spec)
    public = spec.rubrics_public
    if link_site_data(tables, questions, submissions, public, out, ("downloads",)) is None:
        raise GamutError(
            f"{spec.results / PUBLISHED} holds no verdict and response files of these results "
            "and submissions; run `gamut score` first"
        )
    card = out / "downloads" / "README.md"
    write_dataset(spec, tables, out, load_questions(questions), card, repo)
    return out / "downloads"


@dataclass(frozen=True)
class Page:
    """One page of the site, or a family of pages (one per domain, submission, ...); its fields
    are described in docs/adding-a-page.md, step 3. ``template`` None: hand-written, copied
    from ``site_src/`` and listed when the deployment has it (or has ``placeholder``)."""

    path: str
    template: str | None
    title: str = ""
    nav: str | None = None
    reads: tuple[str, ...] = ()
    context: Callable[[Site], dict[str, Any]] = lambda _site: {}
    each: Callable[[Site], list[Item]] | None = None
    shown: Callable[[Site], bool] | None = None
    wide: bool = False
    placeholder: str | None = None

    def items(self, site: Site) -> list[tuple[str, str, dict[str, Any]]]:
        """Each page to write, as (path, title, template variables)."""
        if self.each is None:
            return [(self.path, self.title, self.context(site))]
        return [(self.path.format(key), title, ctx) for key, title, ctx in self.each(site)]


def _domains(site: Site) -> list[Item]:
    names = sorted({str(d) for d in site.tables["by_domain"]["domain"]})
    return [(slug(n), human(n), {"ctx": pages.domain(site.tables, n)}) for n in names]


def _judging(site: Site) -> list[Item]:
    return [
        (
            file_id(version.lower()),
            f"How this was judged ({version})",
            {"ctx": judging_context(site.tables, version)},
        )
        for version in judges_by_prompt(site.tables)
    ]


def _explorer(site: Site) -> dict[str, Any]:
    return {"ctx": site.explorer, "public": site.spec.rubrics_public}


def _compare(site: Site) -> dict[str, Any]:
    settings = pages.ordered_settings(site.tables["leaderboard"])
    data = write_compare_data(site.tables, site.docs, settings)
    return {"ctx": compare_page(site.tables, site.shown, settings, data)}


def _submissions(site: Site) -> list[Item]:
    per_sub, badges = site.downloads["per_submission"], write_badges(site.tables, site.docs)
    return [
        (
            file_id(sid),
            site.names[sid],
            {
                "ctx": submission_page(site.tables, sid, per_sub.get(sid, {})),
                "picks": highlights(site.tables, site.inputs, sid),
                "badge": _badge_embed(site.spec, badges.get(sid), site.names[sid]),
            },
        )
        for sid in site.by_name()
    ]


def _badge_embed(spec: SiteSpec, path: str | None, name: str) -> dict[str, str] | None:
    """The model page's badge: its path from the page, and the Markdown a model card embeds
    (with the site's address when it is configured, else with ``SITE_URL`` to replace)."""
    if path is None:
        return None
    site = spec.url.rstrip("/") if spec.url else "SITE_URL"
    alt = f"GAMUT score of {name}".replace("[", "(").replace("]", ")")
    embed = f"[![{alt}]({site}/{path})]({site}/)"
    return {"src": f"../{path}", "markdown": embed, "needs_url": "" if spec.url else "yes"}


def _submission_index(site: Site) -> dict[str, Any]:
    lb = site.tables["leaderboard"]
    orgs = dict(zip(lb["submission_id"].astype(str), lb["organisation"], strict=True))
    items = [(f"{file_id(s)}.html", site.names[s], orgs.get(s)) for s in site.by_name()]
    history = site.spec.history or History(unavailable="the build was given no history")
    built = str(site.tables.provenance.get("generated_at", "1970-01-01T00:00:00Z"))
    feed = write_feed(
        site.docs, history, site.names, title=site.spec.title, url=site.spec.url, updated=built
    )
    return {
        "items": items,
        "feed": f"../{feed}",
        "changes": len(history.changes),
        "unavailable": history.unavailable,
    }


def _downloads(site: Site) -> dict[str, Any]:
    dl, per_sub = site.downloads, site.downloads["per_submission"]
    return {
        "main": dl["main"],
        "verdicts": dl["verdicts"],
        "public": site.spec.rubrics_public,
        "per_submission": [
            (f"submissions/{file_id(s)}.html", site.names.get(s, s), list(per_sub[s].items()))
            for s in sorted(per_sub)
        ],
    }


def _being_written(title: str, whose: str) -> str:
    return f"# {title}\n\nThe {whose} guide is being written.\n"


#: Every page, in the navigation's order (the pages of a family in the order ``each`` gives).
PAGES: tuple[Page, ...] = (
    Page("index.md", "index.md.j2", "Leaderboard", "Leaderboard",
         ("leaderboard", "min_detectable_difference", "audit_incomplete"),
         lambda s: {"lb": pages.leaderboard(s.tables)}, wide=True),
    Page("domains/index.md", "domains.md.j2", "Domains", "Domains", ("by_domain",),
         lambda s: {"ctx": pages.domains(s.tables)}),
    Page("domains/{}.md", "domain.md.j2", nav="Domains", reads=("by_domain",), each=_domains),
    Page("explorer.md", "explorer.md.j2", "Questions", "Questions", ("question_scores",),
         _explorer, wide=True),
    Page("compare.md", "compare.md.j2", "Compare models", "Compare",
         ("leaderboard", "pairwise", "question_scores"), _compare, wide=True),
    Page("multimodal.md", "multimodal.md.j2", "Multimodal vs text-only",
         "Multimodal vs text-only", ("modality", "modality_summary"),
         lambda s: {"ctx": pages.multimodal(s.tables)}),
    Page("popularity.md", "popularity.md.j2", "Popularity and egocentric", "Popularity",
         ("by_popularity", "by_egocentric"), lambda s: {"ctx": pages.groups(s.tables)}),
    Page("judges.md", "judges.md.j2", "Judges", "Judges",
         ("judge_scores", "judge_tau", "judge_kappa", "judge_kappa_by_kind", "judge_leniency",
          "judge_self_preference", "rank_sensitivity", "judge_human", "judge_annotator",
          "human_human", "judge_drift"),
         lambda s: {"ctx": judges_page(s.tables)}, wide=True),
    Page(JUDGING + "/{}.md", "judging.md.j2", each=_judging),
    Page("cost.md", "cost.md.j2", "Cost and length", "Cost", ("leaderboard",),
         lambda s: {"ctx": cost_page(s.tables, s.names)}, wide=True),
    Page("submissions/index.md", "submissions.md.j2", "Submissions", "Submissions",
         ("leaderboard",), _submission_index),
    Page("submissions/{}.md", "submission.md.j2", nav="Submissions",
         reads=("leaderboard", "by_domain", "by_kind", "question_scores"), each=_submissions),
    Page("downloads.md", "downloads.md.j2", "Downloads", "Downloads", context=_downloads),
    Page("methodology.md", None, nav=""),
    Page("submit.md", None, nav="", placeholder=_being_written("Submit", "submitter's")),
    Page("maintainers.md", None, nav="", placeholder=_being_written("Maintainers", "maintainers'")),
    Page("cite.md", "cite.md.j2", "Cite", "",
         context=lambda s: {"ctx": cite_page(s.spec, s.tables)}),
)  # fmt: skip


def navigation(written: list[tuple[Page, list[tuple[str, str]]]], docs: Path) -> list[Any]:
    """The mkdocs ``nav``: the written pages (each with its files' (path, title)) in registry
    order, then the deployment's other hand-written pages at the top of ``docs``, by name."""
    nav: list[Any] = []
    sections: dict[str, list[Any]] = {}
    families = {p.nav for p in PAGES if p.each is not None}
    for page, files in written:
        if page.nav == "":
            nav += [path for path, _title in files]
        elif page.nav is not None and page.nav not in families:
            nav += [{page.nav: path} for path, _title in files]
        elif page.nav is not None:
            if page.nav not in sections:
                sections[page.nav] = []
                nav.append({page.nav: sections[page.nav]})
            sections[page.nav] += [
                path if page.each is None else {html.escape(title): path} for path, title in files
            ]
    known = {p.path for p in PAGES}
    return nav + sorted(p.name for p in docs.glob("*.md") if p.name not in known)
