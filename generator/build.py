"""Assemble the docs folder (hand-written pages + pages generated from the score tables) and run
``mkdocs build`` on it. Every build starts from scratch, so removed submissions leave no pages."""

from __future__ import annotations

import html
import json
import logging
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator import pages, vendor
from generator.badges import write_badges
from generator.cite import cite_page
from generator.compare import compare_page, write_compare_data
from generator.cost import cost_page
from generator.downloads import (
    CARD_STAGING,
    Download,
    dataset_card,
    responses_download,
    write_downloads,
)
from generator.explorer import write_explorer_data
from generator.feed import write_feed
from generator.inputs import load_site_inputs
from generator.judges import judges_page
from generator.judging import judges_by_prompt, judging_context, judging_page
from generator.render import environment, file_id, human, slug
from generator.spec import History, SiteSpec
from generator.submissions import highlights, submission_page
from generator.tables import ScoreTables, SiteError, load_tables
from scoring.questions import load_questions
from scoring.storage import make_staging_folder, remove_stale_staging

ASSETS = Path(__file__).parent / "assets"
REPO = Path(__file__).resolve().parents[1]
GENERATED = Path("site_src") / "generated"
PREVIEW_URL = "http://127.0.0.1:8000/"
PLACEHOLDERS = {
    "submit.md": "# Submit\n\nThe submitter's guide is being written.\n",
    "maintainers.md": "# Maintainers\n\nThe maintainers' guide is being written.\n",
}


def project_dir(spec: SiteSpec) -> Path:
    """The folder holding ``mkdocs.yml`` and ``site_src/``: the config's, else this checkout's."""
    for d in (spec.root, REPO):
        if (d / "mkdocs.yml").is_file() and (d / "site_src").is_dir():
            return d
    raise SiteError(
        f"no mkdocs.yml and site_src/ beside {spec.root} or in {REPO}; "
        "run from a checkout of the repository"
    )


def _title(text: str) -> Markup:
    """A front-matter title: HTML-escaped (the theme prints titles raw), YAML-quoted."""
    return Markup(json.dumps(html.escape(text, quote=True)))


def _badge_embed(spec: SiteSpec, path: str | None, name: str) -> dict[str, str] | None:
    """The model page's badge: its path from the page, and the Markdown a model card embeds
    (with the site's address when it is configured, else with ``SITE_URL`` to replace)."""
    if path is None:
        return None
    site = spec.url.rstrip("/") if spec.url else "SITE_URL"
    alt = f"GAMUT score of {name}".replace("[", "(").replace("]", ")")
    embed = f"[![{alt}]({site}/{path})]({site}/)"
    return {"src": f"../{path}", "markdown": embed, "needs_url": "" if spec.url else "yes"}


def _copy_handwritten(src: Path, docs: Path) -> None:
    for entry in src.iterdir():
        if entry.name == "generated" or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.copytree(entry, docs / entry.name)
        else:
            shutil.copy2(entry, docs / entry.name)
    for name, text in PLACEHOLDERS.items():
        if not (docs / name).exists():
            (docs / name).write_text(text, encoding="utf-8")


def generate_pages(spec: SiteSpec, docs: Path, tables: ScoreTables | None = None) -> list[Any]:
    """Copy the hand-written pages and write the generated pages, assets and downloads into
    ``docs``.

    Args:
        spec: what to build from and into.
        docs: an empty build copy of the docs folder.
        tables: the score tables (read from ``spec.results`` when not given).

    Returns:
        The site navigation (mkdocs ``nav``), with one entry per domain and per submission.
    """
    tables = tables or load_tables(spec.results)
    _copy_handwritten(project_dir(spec) / "site_src", docs)
    env = environment()
    public = spec.rubrics_public
    common = {
        "demo": bool(spec.demo_notice or tables.is_demo),
        "judge": tables.primary_judge,
        "rubric_version": str(tables.provenance.get("rubric_version", "unknown")),
        "offline_matcher": tables.offline_matcher,
        "submissions_open": spec.submissions_open,
    }

    def write(rel: str, template: str, title: str, **ctx: Any) -> None:
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = env.get_template(template).render(title=_title(title), **common, **ctx)
        path.write_text(text, encoding="utf-8")

    if not spec.submissions_open:  # the hand-written Submit page says so under its title
        submit = docs / "submit.md"
        title, _, rest = submit.read_text(encoding="utf-8").partition("\n")
        closed = env.get_template("_closed.md.j2").render(on_submit=True, **common)
        submit.write_text(f"{title}\n\n{closed}\n{rest}", encoding="utf-8")
    (docs / "assets").mkdir(parents=True, exist_ok=True)
    for bundle in vendor.SHIPPED:
        shutil.copyfile(vendor.verified(bundle), docs / "assets" / bundle.asset)
    for asset in ASSETS.iterdir():
        shutil.copy2(asset, docs / "assets" / asset.name)

    questions = load_questions(spec.questions) if spec.questions is not None else None
    dl = write_downloads(tables, docs, public=public, questions=questions)
    write("index.md", "index.md.j2", "Leaderboard", lb=pages.leaderboard(tables), wide=True)
    dom_ctx = pages.domains(tables)
    write("domains/index.md", "domains.md.j2", "Domains", ctx=dom_ctx)
    dom_nav: list[Any] = ["domains/index.md"]
    for name, _href in dom_ctx["domains"]:
        title = human(name)
        write(f"domains/{slug(name)}.md", "domain.md.j2", title, ctx=pages.domain(tables, name))
        dom_nav.append({html.escape(title): f"domains/{slug(name)}.md"})
    write(
        "multimodal.md", "multimodal.md.j2", "Multimodal vs text-only", ctx=pages.multimodal(tables)
    )
    write(
        "popularity.md", "popularity.md.j2", "Popularity and egocentric", ctx=pages.groups(tables)
    )
    write("judges.md", "judges.md.j2", "Judges", ctx=judges_page(tables), wide=True)
    for version in judges_by_prompt(tables):  # how each verdict was asked for: the template
        write(
            judging_page(version),
            "judging.md.j2",
            f"How this was judged ({version})",
            ctx=judging_context(tables, version),
        )

    names = pages.model_names(tables)
    write("cost.md", "cost.md.j2", "Cost and length", ctx=cost_page(tables, names), wide=True)
    shown = {sid: names[sid] for sid in pages.ranked_ids(tables)}
    if spec.questions is None or spec.submissions is None:
        raise SiteError(
            "the site shows every question and response: give the build the questions file "
            "and the submissions folder (SiteSpec.questions, SiteSpec.submissions)"
        )
    inputs = load_site_inputs(spec.questions, spec.submissions, tables, public)
    main_downloads: list[Any] = dl["main"]  # type: ignore[assignment]
    main_downloads.insert(
        2,  # after the leaderboard and its provenance
        responses_download(
            inputs.responses, [q.question_id for q in inputs.questions], docs, tables.provenance
        ),
    )
    _stage_card(spec, docs, main_downloads, dl["verdicts"], tables.provenance)
    explorer = write_explorer_data(tables, inputs, docs, public, shown)
    write("explorer.md", "explorer.md.j2", "Questions", ctx=explorer, public=public, wide=True)
    settings = pages.ordered_settings(tables["leaderboard"])
    compare_data = write_compare_data(tables, docs, settings)
    write("compare.md", "compare.md.j2", "Compare models",
          ctx=compare_page(tables, shown, settings, compare_data), wide=True)  # fmt: skip
    badge_paths = write_badges(tables, docs)
    lb = tables["leaderboard"]
    orgs = dict(zip(lb["submission_id"].astype(str), lb["organisation"], strict=True))
    per_sub: dict[str, dict[str, str]] = dl["per_submission"]  # type: ignore[assignment]
    sub_nav: list[Any] = ["submissions/index.md"]
    items = []
    for sid in sorted(names, key=lambda s: names[s].lower()):
        rel = f"submissions/{file_id(sid)}.md"
        write(
            rel,
            "submission.md.j2",
            names[sid],
            ctx=submission_page(tables, sid, per_sub.get(sid, {})),
            picks=highlights(tables, inputs, sid),
            badge=_badge_embed(spec, badge_paths.get(sid), names[sid]),
        )
        sub_nav.append({html.escape(names[sid]): rel})
        items.append((f"{file_id(sid)}.html", names[sid], orgs.get(sid)))
    history = spec.history or History(unavailable="the build was given no history")
    built = str(tables.provenance.get("generated_at", "1970-01-01T00:00:00Z"))
    feed = write_feed(docs, history, names, title=spec.title, url=spec.url, updated=built)
    write(
        "submissions/index.md",
        "submissions.md.j2",
        "Submissions",
        items=items,
        feed=f"../{feed}",
        changes=len(history.changes),
        unavailable=history.unavailable,
    )
    write(
        "downloads.md",
        "downloads.md.j2",
        "Downloads",
        main=dl["main"],
        verdicts=dl["verdicts"],
        public=public,
        per_submission=[
            (f"submissions/{file_id(s)}.html", names.get(s, s), list(per_sub[s].items()))
            for s in sorted(per_sub)
        ],
    )
    write("cite.md", "cite.md.j2", "Cite", ctx=cite_page(spec, tables))
    nav: list[Any] = [
        {"Leaderboard": "index.md"},
        {"Domains": dom_nav},
        {"Questions": "explorer.md"},
        {"Compare": "compare.md"},
        {"Multimodal vs text-only": "multimodal.md"},
        {"Popularity": "popularity.md"},
        {"Judges": "judges.md"},
        {"Cost": "cost.md"},
        {"Submissions": sub_nav},
        {"Downloads": "downloads.md"},
    ]
    extra = sorted(
        p.name
        for p in docs.glob("*.md")
        if p.name
        not in {
            "index.md",
            "explorer.md",
            "compare.md",
            "multimodal.md",
            "popularity.md",
            "judges.md",
            "cost.md",
            "downloads.md",
        }
    )
    order = {"methodology.md": 0, "submit.md": 1, "maintainers.md": 2, "cite.md": 3}
    for name in sorted(extra, key=lambda n: (order.get(n, 9), n)):
        nav.append(name)
    return nav


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _quiet_mkdocs(logger: str = "mkdocs") -> Iterator[_Collect]:
    """Collect the builder's warnings (to report them) instead of printing its info lines."""
    log = logging.getLogger(logger)
    level, propagate = log.level, log.propagate
    handler = _Collect()
    log.setLevel(logging.WARNING)
    log.propagate = False
    log.addHandler(handler)
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def _swap_in(new: Path, target: Path) -> None:
    """Replace ``target`` by ``new`` (both folders on one filesystem)."""
    old = None
    if target.exists():
        old = make_staging_folder(target.parent, f".{target.name}.old.")
        os.replace(target, old / target.name)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def site_builder(name: str) -> tuple[Callable[..., Any], Callable[..., Any], type[Exception]]:
    """The builder's ``load_config``, ``build`` and base exception.

    ProperDocs serves the theme's ``mkdocs.*`` imports from its own modules (its
    ``properdocs.replacement``, which its command line imports first) for the whole process, so
    one process builds with one of the two: ``gamut site build`` and ``gamut run`` do.

    Raises:
        SiteError: this process has loaded the other builder.
    """
    aliased = "properdocs.replacement" in sys.modules
    mkdocs_loaded = any(m.startswith("mkdocs.") for m in sys.modules)
    if name == "mkdocs":
        if aliased:
            raise SiteError(f"this process has built with ProperDocs; {_NEW_PROCESS}")
        from mkdocs.commands.build import build as mk_build
        from mkdocs.config import load_config as mk_load_config
        from mkdocs.exceptions import MkDocsException

        return mk_load_config, mk_build, MkDocsException
    if mkdocs_loaded and not aliased:
        raise SiteError(f"this process has loaded MkDocs; {_NEW_PROCESS}")
    import properdocs.replacement  # noqa: F401  (the theme's mkdocs.* imports)
    from properdocs.commands.build import build
    from properdocs.config import load_config
    from properdocs.exceptions import ProperDocsException

    return load_config, build, ProperDocsException


_NEW_PROCESS = "build in a new process (`gamut site build`), one builder each"


def run_mkdocs(spec: SiteSpec, docs: Path, nav: list[Any], site_dir: Path) -> None:
    """Build ``docs`` into ``site_dir`` with the project's mkdocs.yml in strict mode, by the
    builder ``spec.builder`` names (MkDocs or ProperDocs).

    Raises:
        SiteError: when the builder reports a warning or an error.
    """
    load_config, build, MkDocsException = site_builder(spec.builder)

    overrides: dict[str, Any] = {
        "site_name": spec.title,
        "site_description": spec.description,
        "nav": nav,
    }
    # The theme's instant navigation reads the sitemap, which needs a site URL; without a
    # configured one the site is previewed with `gamut site serve` at this address.
    overrides["site_url"] = spec.url or PREVIEW_URL
    if spec.repo_url:
        overrides["repo_url"] = spec.repo_url
    with _quiet_mkdocs(spec.builder) as warnings:
        try:
            mk = load_config(
                str(project_dir(spec) / "mkdocs.yml"),
                docs_dir=str(docs),
                site_dir=str(site_dir),
                strict=True,
                **overrides,
            )
            build(mk)
        except (MkDocsException, SystemExit) as exc:
            details = "".join(f"\n  {m}" for m in warnings.messages)
            raise SiteError(f"{spec.builder} build failed: {exc}{details}") from None


def _stage_card(
    spec: SiteSpec,
    docs: Path,
    main: list[Download],
    verdicts: object,
    provenance: dict[str, Any],
) -> None:
    """Write the dataset card where :func:`build_site` takes it from after mkdocs, and list it
    with the provenance download."""
    card = docs / CARD_STAGING
    prov = next(d for d in main if d.name == "provenance")
    prov.files.append(("Markdown, the dataset card", "downloads/README.md", 0))
    listed = [d for d in (verdicts, *main) if isinstance(d, Download)]
    text = dataset_card(
        listed,
        provenance,
        title=spec.title,
        description=spec.description,
        public=spec.rubrics_public,
    )
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text(text, encoding="utf-8")
    prov.files[-1] = (*prov.files[-1][:2], card.stat().st_size)


def build_site(spec: SiteSpec) -> Path:
    """Generate every page from the score tables and build the static site.

    The pages and the site are built in staging folders beside their targets and swapped in when
    complete; staging folders a killed build left behind are removed first.

    Returns:
        The built site folder (``spec.out``), holding ``index.html``.

    Raises:
        ProblemsError: when score tables are missing (run ``gamut score`` first).
        SiteError: when mkdocs fails.
    """
    project = project_dir(spec)
    tables = load_tables(spec.results)
    keep_docs = project == spec.root  # the project's own build: keep site_src/generated
    out = spec.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging_parent = project / "site_src" if keep_docs else out.parent
    # a build killed outright (SIGKILL, out of memory) left its staging folders, with response
    # text in them: a later build removes those no running process is filling
    remove_stale_staging(out.parent, (".docs.", f".{out.name}.", f".{out.name}.old."))
    if keep_docs:
        remove_stale_staging(staging_parent, (".docs.", f".{GENERATED.name}.old."))
    docs = make_staging_folder(staging_parent, ".docs.")
    built = make_staging_folder(out.parent, f".{out.name}.")
    try:
        nav = generate_pages(spec, docs, tables)
        if keep_docs:
            _swap_in(docs, project / GENERATED)
            docs = project / GENERATED
        run_mkdocs(spec, docs, nav, built)
        shutil.copyfile(docs / CARD_STAGING, built / "downloads" / "README.md")
        _swap_in(built, out)
    finally:
        shutil.rmtree(built, ignore_errors=True)
        if not (keep_docs and docs == project / GENERATED):
            shutil.rmtree(docs, ignore_errors=True)
    return out


__all__ = ["SiteError", "build_site", "generate_pages", "project_dir", "run_mkdocs"]
