"""Assemble the docs folder (hand-written pages + pages generated from the score tables) and run
``mkdocs build`` on it. Every build starts from scratch, so removed submissions leave no pages;
a build whose inputs did not change since the last one into the same folder is skipped."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import logging
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator import registry, vendor
from generator.downloads import CARD_STAGING
from generator.published import PUBLISHED
from generator.registry import Page, navigation
from generator.render import environment
from generator.spec import SiteSpec
from generator.tables import ScoreTables, content_digest, load_tables
from scoring import __version__
from scoring.errors import GamutError
from scoring.storage import (
    atomic_write_text,
    make_staging_folder,
    remove_stale_staging,
    swap_folder,
)

ASSETS = Path(__file__).parent / "assets"
REPO = Path(__file__).resolve().parents[1]
GENERATED = Path("site_src") / "generated"
PREVIEW_URL = "http://127.0.0.1:8000/"
#: The file in a built site holding the fingerprint of what it was built from.
STAMP = ".build-stamp"


def project_dir(spec: SiteSpec) -> Path:
    """The folder holding ``mkdocs.yml`` and ``site_src/``: the config's, else this checkout's."""
    for d in (spec.root, REPO):
        if (d / "mkdocs.yml").is_file() and (d / "site_src").is_dir():
            return d
    raise GamutError(
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


def generate_pages(spec: SiteSpec, docs: Path, tables: ScoreTables | None = None) -> list[Any]:
    """Copy the hand-written pages and write the registered pages (:data:`generator.registry.
    PAGES`), assets and downloads into ``docs``.

    Args:
        spec: what to build from and into.
        docs: an empty build copy of the docs folder.
        tables: the score tables (read from ``spec.results`` when not given).

    Returns:
        The site navigation (mkdocs ``nav``), with one entry per domain and per submission.
    """
    tables = tables or load_tables(spec.results)
    _copy_handwritten(project_dir(spec) / "site_src", docs)
    (docs / "assets").mkdir(parents=True, exist_ok=True)
    for bundle in vendor.SHIPPED:
        shutil.copyfile(vendor.verified(bundle), docs / "assets" / bundle.asset)
    for asset in ASSETS.iterdir():
        shutil.copy2(asset, docs / "assets" / asset.name)
    env = environment()
    common = {
        "demo": bool(spec.demo_notice or tables.is_demo),
        "judge": tables.primary_judge,
        "rubric_version": str(tables.provenance.get("rubric_version", "unknown")),
        "offline_matcher": tables.offline_matcher,
        "submissions_open": spec.submissions_open,
    }
    if not spec.submissions_open:  # the hand-written Submit page says so under its title
        submit = docs / "submit.md"
        title, _, rest = submit.read_text(encoding="utf-8").partition("\n")
        closed = env.get_template("_closed.md.j2").render(on_submit=True, **common)
        submit.write_text(f"{title}\n\n{closed}\n{rest}", encoding="utf-8")
    site = registry.gather(spec, tables, docs)
    written: list[tuple[Page, list[tuple[str, str]]]] = []
    for page in registry.PAGES:
        if page.shown is not None and not page.shown(site):
            continue
        if page.template is None:  # hand-written: listed when the deployment has it
            if page.placeholder is not None and not (docs / page.path).exists():
                (docs / page.path).write_text(page.placeholder, encoding="utf-8")
            written.append((page, [(page.path, "")] if (docs / page.path).exists() else []))
            continue
        files = page.items(site)
        for rel, title, ctx in files:
            path = docs / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            template = env.get_template(page.template)
            extra = {"wide": True} if page.wide else {}
            text = template.render(title=_title(title), **common, **extra, **ctx)
            path.write_text(text, encoding="utf-8")
        written.append((page, [(rel, title) for rel, title, _ctx in files]))
    return navigation(written, docs)


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


def site_builder(name: str) -> tuple[Callable[..., Any], Callable[..., Any], type[Exception]]:
    """The builder's ``load_config``, ``build`` and base exception.

    ProperDocs serves the theme's ``mkdocs.*`` imports from its own modules (its
    ``properdocs.replacement``, which its command line imports first) for the whole process, so
    one process builds with one of the two: ``gamut site build`` and ``gamut run`` do.

    Raises:
        GamutError: this process has loaded the other builder.
    """
    aliased = "properdocs.replacement" in sys.modules
    mkdocs_loaded = any(m.startswith("mkdocs.") for m in sys.modules)
    if name == "mkdocs":
        if aliased:
            raise GamutError(f"this process has built with ProperDocs; {_NEW_PROCESS}")
        from mkdocs.commands.build import build as mk_build
        from mkdocs.config import load_config as mk_load_config
        from mkdocs.exceptions import MkDocsException

        return mk_load_config, mk_build, MkDocsException
    if mkdocs_loaded and not aliased:
        raise GamutError(f"this process has loaded MkDocs; {_NEW_PROCESS}")
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
        GamutError: when the builder reports a warning or an error.
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
            raise GamutError(f"{spec.builder} build failed: {exc}{details}") from None


def fingerprint(spec: SiteSpec) -> str:
    """A digest of everything a build of ``spec`` reads: the spec itself (the config's [site]
    table, the paths, the change history), the engine version, and the size and modification
    time of every file in the results, questions and submissions, the project's ``site_src/``
    (not its generated pages) and ``mkdocs.yml``, this package (templates, assets, code) and
    the vendored bundles; the results files by their content (:func:`content_digest`), less the
    score step's published folder, made from what is hashed here."""
    h = hashlib.sha256(json.dumps(dataclasses.asdict(spec), default=str).encode())
    h.update(f"\0{__version__}\0{spec.out.resolve()}".encode())
    project = project_dir(spec)
    roots = [spec.results, spec.questions, spec.submissions, project / "site_src"]
    roots += [project / "mkdocs.yml", Path(__file__).parent]
    roots += [b.cached for b in vendor.SHIPPED]
    for root in roots:
        if root is None:
            continue
        paths = [root] if not root.is_dir() else sorted(root.rglob("*"))
        for path in paths:
            rel = path.relative_to(root).parts
            generated = root.name == "site_src" and rel[:1] == ("generated",)
            # what the score step publishes is made from the inputs hashed here
            generated |= root == spec.results and rel[:1] == (PUBLISHED,)
            if generated or any(p[:1] == "." or p == "__pycache__" for p in rel):
                continue
            st = path.stat() if path.exists() else None
            seen = "absent" if st is None else f"{st.st_size} {st.st_mtime_ns} {st.st_mode}"
            if root == spec.results and st is not None and path.is_file():
                # `gamut score` rewrites them each run
                seen = f"{st.st_size} {content_digest(path)}"
            h.update(f"\0{path}\0{seen}".encode())
    return h.hexdigest()


def _stamp(out: Path) -> str | None:
    """The fingerprint the site in ``out`` was built from (None: no built site, or no stamp)."""
    if not (out / STAMP).is_file():
        return None
    with (out / STAMP).open("rb") as f:
        return f.read(100).decode("utf-8", errors="replace").strip()


def build_site(
    spec: SiteSpec, *, force: bool = False, unchanged: Callable[[Path], None] | None = None
) -> Path:
    """Generate every page from the score tables and build the static site, unless the site in
    ``spec.out`` was built from the same inputs (its :data:`STAMP` holds their
    :func:`fingerprint`) and ``force`` is off.

    The pages and the site are built in staging folders beside their targets and swapped in when
    complete; staging folders a killed build left behind are removed first. The built site's
    :data:`STAMP` file, written last, records the inputs' :func:`fingerprint`; ``unchanged`` is
    called with the site folder when the build is skipped.

    Returns:
        The built site folder (``spec.out``), holding ``index.html``.

    Raises:
        ProblemsError: when score tables are missing (run ``gamut score`` first).
        GamutError: when mkdocs fails.
    """
    digest = fingerprint(spec)
    if not force and _stamp(spec.out) == digest:
        if unchanged is not None:
            unchanged(spec.out.resolve())
        return spec.out.resolve()
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
            swap_folder(docs, project / GENERATED)
            docs = project / GENERATED
        run_mkdocs(spec, docs, nav, built)
        shutil.copyfile(docs / CARD_STAGING, built / "downloads" / "README.md")
        swap_folder(built, out)
        atomic_write_text(out / STAMP, digest + "\n")
    finally:
        shutil.rmtree(built, ignore_errors=True)
        if not (keep_docs and docs == project / GENERATED):
            shutil.rmtree(docs, ignore_errors=True)
    return out
