"""The charting library in a real headless Chromium: every chart draws with the pinned cartesian
bundle and no console error, pages without a chart load no charting code, and the first chart
after instant navigation from such a page still draws."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator.serve import make_server
from generator.vendor import PLOTLY
from tests.generator.fixture_tables import write_fixture_config

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
_DRAWN = (
    "e => e.getAttribute('data-rendered') === 'true' && "
    "!!e.querySelector('svg.main-svg .overplot .trace, svg.main-svg .overplot .hm')"
)


@dataclass
class Session:
    base: str
    site: Path
    page: object
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (`make browser-deps` installs it)")
    from playwright.sync_api import sync_playwright

    served = tmp_path_factory.mktemp("served")
    server = make_server(served, port=0)
    base = f"http://127.0.0.1:{server.server_address[1]}/site/"
    cfg = load_config(write_fixture_config(tmp_path_factory.mktemp("fx"), rubrics_public=False))
    site_cfg = cfg.site.model_copy(update={"url": base, "out": served / "site"})
    site = pipeline.build_site(Project(cfg.model_copy(update={"site": site_cfg})))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        s = Session(base, site, page)
        page.on("console", lambda m: s.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: s.errors.append(str(e)))
        page.on("request", lambda r: s.requests.append(r.url))
        try:
            yield s
        finally:
            ctx.close()
            browser.close()
            server.shutdown()
            server.server_close()


def _pages(site: Path) -> tuple[list[str], list[str]]:
    """(pages with a chart, pages without one), from the built HTML."""
    charts, plain = [], []
    for p in sorted(site.rglob("*.html")):
        if p.name == "404.html" or "assets" in p.parts:
            continue
        name = str(p.relative_to(site))
        (charts if "data-figure=" in p.read_text(encoding="utf-8") else plain).append(name)
    return charts, plain


def _bundle_requests(s: Session) -> list[str]:
    return [u for u in s.requests if "plotly" in u.lower()]


def test_every_chart_draws_with_the_cartesian_bundle(session: Session) -> None:
    page = session.page
    charts, _ = _pages(session.site)
    assert len(charts) >= 5
    n = 0
    for name in charts:
        session.errors.clear()
        session.requests.clear()
        page.goto(session.base + name)  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            f"() => [...document.querySelectorAll('.gamut-chart')].every({_DRAWN})",
            timeout=15_000,
        )
        drawn = page.eval_on_selector_all(".gamut-chart", f"els => els.map({_DRAWN})")  # type: ignore[attr-defined]
        assert drawn and all(drawn), name
        n += len(drawn)
        assert not session.errors, f"{name}: {session.errors}"
        assert _bundle_requests(session) == [session.base + "assets/" + PLOTLY.asset], name
        version = page.evaluate("Plotly.version")  # type: ignore[attr-defined]
        assert version == PLOTLY.version
    assert n >= 8
    assert all(u.startswith(session.base) or u.startswith("data:") for u in session.requests)


def test_pages_without_a_chart_load_no_charting_library(session: Session) -> None:
    page = session.page
    _, plain = _pages(session.site)
    assert {"downloads.html", "methodology.html", "submissions/index.html"} <= set(plain)
    for name in plain:
        session.errors.clear()
        session.requests.clear()
        page.goto(session.base + name, wait_until="networkidle")  # type: ignore[attr-defined]
        assert not _bundle_requests(session), name
        assert page.evaluate("typeof Plotly") == "undefined", name  # type: ignore[attr-defined]
        assert not session.errors, f"{name}: {session.errors}"


def test_instant_navigation_from_a_chartless_page_loads_the_library_once(
    session: Session,
) -> None:
    page = session.page
    page.goto(session.base + "downloads.html", wait_until="networkidle")  # type: ignore[attr-defined]
    session.requests.clear()
    session.errors.clear()
    page.evaluate("window.__sameDocument = true")  # type: ignore[attr-defined]
    for label, url in (("Leaderboard", "index.html"), ("Judges", "judges.html")):
        page.click(f".md-tabs a:has-text('{label}')")  # type: ignore[attr-defined]
        page.wait_for_url(re.compile(re.escape(url) + "$"))  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            f"() => [...document.querySelectorAll('.gamut-chart')].every({_DRAWN})",
            timeout=15_000,
        )
    assert page.evaluate("window.__sameDocument === true")  # type: ignore[attr-defined]
    assert len(_bundle_requests(session)) == 1
    assert not session.errors, session.errors


def test_cost_page_scatters_in_light_dark_and_on_a_phone(session: Session) -> None:
    """The cost page's scatters draw one point per complete row of the primary judge (4 models x
    2 settings, less one incomplete row; the model-token one only the model whose responses
    record their tokens, in both settings), hover with the model's name, follow the dark
    palette, and fit a 390 px phone with their axis titles."""
    page = session.page
    names = {"Acme Vision 1", "Zen Omni", "Tiny LM", "<img src=x onerror=alert(1)>"}
    inks = {}
    try:
        for scheme, width in (("light", 1280), ("dark", 1280), ("dark", 390)):
            session.errors.clear()
            page.set_viewport_size({"width": width, "height": 900})  # type: ignore[attr-defined]
            page.emulate_media(color_scheme=scheme)  # type: ignore[attr-defined]
            page.goto(session.base + "cost.html")  # type: ignore[attr-defined]
            page.evaluate("localStorage.clear(); sessionStorage.clear()")  # type: ignore[attr-defined]
            page.reload()  # type: ignore[attr-defined]
            page.wait_for_function(  # type: ignore[attr-defined]
                f"() => [...document.querySelectorAll('.gamut-chart')].every({_DRAWN})",
                timeout=15_000,
            )
            drawn = page.eval_on_selector_all(  # type: ignore[attr-defined]
                ".gamut-chart",
                "els => els.map(e => e.querySelectorAll('.scatterlayer .point').length)",
            )
            assert drawn == [7, 7, 2], (scheme, width, drawn)
            titles = page.eval_on_selector_all(  # type: ignore[attr-defined]
                ".gamut-chart .xtitle", "els => els.map(e => e.textContent)"
            )
            prefixes = ("Judging cost", "Mean response length", "Model output tokens")
            assert len(titles) == 3, titles
            assert all(t.startswith(p) for t, p in zip(titles, prefixes, strict=True)), titles
            page.evaluate(  # type: ignore[attr-defined]
                "Plotly.Fx.hover(document.querySelector('.gamut-chart'), "
                "[{curveNumber: 0, pointNumber: 0}])"
            )
            hover = page.text_content(".gamut-chart .hovertext")  # type: ignore[attr-defined]
            assert hover and any(n in hover for n in names), hover
            inks[(scheme, width)] = page.eval_on_selector(  # type: ignore[attr-defined]
                ".gamut-chart .xtitle", "e => getComputedStyle(e).fill"
            )
            over = page.evaluate(  # type: ignore[attr-defined]
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert over <= 1, (scheme, width, over)
            edges = page.evaluate(  # type: ignore[attr-defined]
                "[...document.querySelectorAll('.gamut-chart .xtitle, .gamut-chart .ytitle')]"
                ".map(e => [e.getBoundingClientRect().left, e.getBoundingClientRect().right])"
            )
            assert edges and all(lo >= 0 and hi <= width for lo, hi in edges), (width, edges)
            assert not session.errors, session.errors
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
        page.emulate_media(color_scheme="light")  # type: ignore[attr-defined]
    assert inks[("light", 1280)] == "rgb(31, 35, 48)"  # the light palette's ink
    assert inks[("dark", 1280)] == inks[("dark", 390)] == "rgb(230, 230, 239)"
