"""Assemble the docs folder (hand-written pages + pages generated from the score tables) and run
``mkdocs build`` on it. Every build starts from scratch, so removed submissions leave no pages."""

from __future__ import annotations

import html
import json
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator import pages, vendor
from generator.compare import compare_page, write_compare_data
from generator.downloads import write_downloads
from generator.explorer import write_explorer_data
from generator.inputs import load_site_inputs
from generator.judges import judges_page
from generator.render import environment, file_id, human, slug
from generator.spec import SiteSpec
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
    }

    def write(rel: str, template: str, title: str, **ctx: Any) -> None:
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = env.get_template(template).render(title=_title(title), **common, **ctx)
        path.write_text(text, encoding="utf-8")

    (docs / "assets").mkdir(parents=True, exist_ok=True)
    for bundle in vendor.SHIPPED:
        shutil.copyfile(vendor.verified(bundle), docs / "assets" / bundle.asset)
    for asset in ASSETS.iterdir():
        shutil.copy2(asset, docs / "assets" / asset.name)

    questions = load_questions(spec.questions) if spec.questions is not None else None
    dl = write_downloads(
        tables, docs, public=public, cache=spec.downloads_cache, questions=questions
    )
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

    names = pages.model_names(tables)
    shown = {sid: names[sid] for sid in pages.ranked_ids(tables)}
    if spec.questions is None or spec.submissions is None:
        raise SiteError(
            "the site shows every question and response: give the build the questions file "
            "and the submissions folder (SiteSpec.questions, SiteSpec.submissions)"
        )
    inputs = load_site_inputs(spec.questions, spec.submissions, tables, public)
    explorer = write_explorer_data(tables, inputs, docs, public, shown)
    write("explorer.md", "explorer.md.j2", "Questions", ctx=explorer, public=public, wide=True)
    settings = pages.ordered_settings(tables["leaderboard"])
    compare_data = write_compare_data(tables, docs, settings)
    write("compare.md", "compare.md.j2", "Compare models",
          ctx=compare_page(tables, shown, settings, compare_data), wide=True)  # fmt: skip
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
        )
        sub_nav.append({html.escape(names[sid]): rel})
        items.append((f"{file_id(sid)}.html", names[sid], orgs.get(sid)))
    write("submissions/index.md", "submissions.md.j2", "Submissions", items=items)
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
    nav: list[Any] = [
        {"Leaderboard": "index.md"},
        {"Domains": dom_nav},
        {"Questions": "explorer.md"},
        {"Compare": "compare.md"},
        {"Multimodal vs text-only": "multimodal.md"},
        {"Popularity": "popularity.md"},
        {"Judges": "judges.md"},
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
            "downloads.md",
        }
    )
    order = {"methodology.md": 0, "submit.md": 1, "maintainers.md": 2}
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
def _quiet_mkdocs() -> Iterator[_Collect]:
    """Collect mkdocs warnings (to report them) instead of printing its info lines."""
    log = logging.getLogger("mkdocs")
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


def run_mkdocs(spec: SiteSpec, docs: Path, nav: list[Any], site_dir: Path) -> None:
    """Build ``docs`` into ``site_dir`` with the project's mkdocs.yml in strict mode.

    Raises:
        SiteError: when mkdocs reports a warning or an error.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

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
    with _quiet_mkdocs() as warnings:
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
            raise SiteError(f"mkdocs build failed: {exc}{details}") from None


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
        _swap_in(built, out)
    finally:
        shutil.rmtree(built, ignore_errors=True)
        if not (keep_docs and docs == project / GENERATED):
            shutil.rmtree(docs, ignore_errors=True)
    return out


__all__ = ["SiteError", "build_site", "generate_pages", "project_dir", "run_mkdocs"]
