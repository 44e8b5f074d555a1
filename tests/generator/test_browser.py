"""The built site in a real headless Chromium: every page renders its charts without console
errors, tables sort, filters filter, instant navigation re-renders charts, axe finds no serious
or critical accessibility problem, and hostile submitter text stays inert."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import GamutConfig, load_config
from gamut.project import Project
from generator.serve import make_server
from tests.generator.conftest import REPO
from tests.generator.fixture_tables import write_fixture_config

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = REPO / "test-artifacts"


def _demo_config(root: Path) -> GamutConfig:
    """The shipped demo with its outputs redirected into ``root``."""
    for part in ("submissions", "verdicts"):
        assert (REPO / "demo" / part).is_dir(), f"demo/{part} missing: run gamut demo write"
    text = (REPO / "gamut.toml").read_text(encoding="utf-8")
    text = re.sub(r'= "demo/', f'= "{REPO / "demo"}/', text)
    (root / "gamut.toml").write_text(text, encoding="utf-8")
    return load_config(root / "gamut.toml")


def _with_site(cfg: GamutConfig, url: str, out: Path) -> GamutConfig:
    return cfg.model_copy(update={"site": cfg.site.model_copy(update={"url": url, "out": out})})


def _build_demo(root: Path, url: str, out: Path) -> Path:
    project = Project(_with_site(_demo_config(root), url, out))
    pipeline.judge(project)
    pipeline.write_verdicts(project)
    pipeline.score(project)
    return pipeline.build_site(project)


@dataclass
class Browser:
    """One Chromium for the module, a page on the served sites, and what the page reported."""

    base: str
    page: object
    demo: Path
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """The demo site at /demo/ and the
    fixture site with its hostile submission at /hostile/, served on 127.0.0.1."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser-deps` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    served = tmp_path_factory.mktemp("served")
    server = make_server(served, port=0)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    # the site URL must match where it is served for the theme's instant navigation
    demo = _build_demo(tmp_path_factory.mktemp("demo"), base + "demo/", served / "demo")
    hostile = load_config(write_fixture_config(tmp_path_factory.mktemp("hostile"),
                                               rubrics_public=False))  # fmt: skip
    pipeline.build_site(Project(_with_site(hostile, base + "hostile/", served / "hostile")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=str(CHROMIUM),
            headless=True, args=ARGS, viewport={"width": 1280, "height": 900},
        )  # fmt: skip
        page = ctx.new_page()
        b = Browser(base, page, demo)
        page.on("console", lambda m: b.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: b.errors.append(str(e)))
        page.on("request", lambda r: None if r.url.startswith(base) or r.url.startswith("data:")
                else b.elsewhere.append(r.url))  # fmt: skip

        def on_dialog(d: object) -> None:
            b.dialogs.append(d.message)  # type: ignore[attr-defined]
            d.dismiss()  # type: ignore[attr-defined]

        page.on("dialog", on_dialog)
        try:
            yield b
        finally:
            ctx.close()
            server.shutdown()
            server.server_close()


def _use_scheme(page: object, base: str, scheme: str) -> None:
    """Switch the preferred colour scheme and forget the palette the theme remembered."""
    page.emulate_media(color_scheme=scheme)  # type: ignore[attr-defined]
    page.goto(base + "demo/index.html")  # type: ignore[attr-defined]
    page.evaluate("localStorage.clear(); sessionStorage.clear()")  # type: ignore[attr-defined]
    page.reload()  # type: ignore[attr-defined]
    want = "slate" if scheme == "dark" else "default"
    page.wait_for_function(  # type: ignore[attr-defined]
        f"() => document.body.getAttribute('data-md-color-scheme') === '{want}'"
    )


def _pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                  if p.name != "404.html" and "assets" not in p.parts)  # fmt: skip


# drawn: plotly finished (our script marks it) and the plot area holds a trace or a heatmap
_DRAWN = (
    "e => e.getAttribute('data-rendered') === 'true' && "
    "!!e.querySelector('svg.main-svg .overplot .trace, svg.main-svg .overplot .hm')"
)


def _charts_drawn(page: object) -> list[bool]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined,no-any-return]
        ".gamut-chart", f"els => els.map({_DRAWN})"
    )


def _wait_for_charts(page: object) -> None:
    page.wait_for_function(  # type: ignore[attr-defined]
        f"() => [...document.querySelectorAll('.gamut-chart')].every({_DRAWN})", timeout=15_000
    )


def test_every_page_renders_without_errors(browser: Browser) -> None:
    page = browser.page
    pages = _pages(browser.demo)
    assert len(pages) >= 15
    n_charts = 0
    for name in pages:
        browser.errors.clear()
        page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
        _wait_for_charts(page)
        drawn = _charts_drawn(page)
        assert all(drawn), name
        n_charts += len(drawn)
        assert not browser.errors, f"{name}: {browser.errors}"
    assert n_charts >= 10
    assert not browser.elsewhere, f"requests leaving the site: {browser.elsewhere[:5]}"


def test_sorting_by_clicking_a_header(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    column = "#leaderboard-table th:nth-child(7)"
    assert "Gamut" in page.inner_text(column)  # type: ignore[attr-defined]

    def values() -> list[float]:
        raw = page.eval_on_selector_all(  # type: ignore[attr-defined]
            "#leaderboard-table tbody tr:not([hidden]) td:nth-child(7)",
            "els => els.map(e => e.dataset.sort)",
        )
        return [float(v) for v in raw if v not in ("", "nan")]

    page.click(column + " button")  # type: ignore[attr-defined]
    up = values()
    assert len(up) >= 3 and up == sorted(up)
    assert page.get_attribute(column, "aria-sort") == "ascending"  # type: ignore[attr-defined]
    page.click(column + " button")  # type: ignore[attr-defined]
    down = values()
    assert down == sorted(down, reverse=True) and down != up


def test_filters_hide_rows(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    visible = "#leaderboard-table tbody tr:not([hidden])"
    settings = page.eval_on_selector_all(  # type: ignore[attr-defined]
        visible, "els => els.map(e => e.dataset.setting)"
    )
    assert set(settings) == {"multimodal"}
    page.select_option("select[data-filter=setting]", "text_only")  # type: ignore[attr-defined]
    settings = page.eval_on_selector_all(  # type: ignore[attr-defined]
        visible, "els => els.map(e => e.dataset.setting)"
    )
    assert settings and set(settings) == {"text_only"}
    page.check("input[data-filter=open]")  # type: ignore[attr-defined]
    flags = page.eval_on_selector_all(  # type: ignore[attr-defined]
        visible, "els => els.map(e => e.dataset.open)"
    )
    assert set(flags) <= {"yes"} and len(flags) < len(settings)


def test_instant_navigation_rerenders_charts(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    page.evaluate("window.__sameDocument = true")  # type: ignore[attr-defined]
    for label, url in (("Multimodal vs text-only", "multimodal.html"), ("Judges", "judges.html"),
                       ("Domains", "domains/index.html")):  # fmt: skip
        browser.errors.clear()
        page.click(f".md-tabs a:has-text('{label}')")  # type: ignore[attr-defined]
        page.wait_for_url(re.compile(re.escape(url) + "$"))  # type: ignore[attr-defined]
        _wait_for_charts(page)
        drawn = _charts_drawn(page)
        assert drawn and all(drawn), url
        assert not browser.errors, browser.errors
    # the theme swapped the content in place: no full page load happened
    assert page.evaluate("window.__sameDocument === true")  # type: ignore[attr-defined]


def test_no_serious_accessibility_violations(browser: Browser) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe, page = Axe(), browser.page
    for scheme in ("light", "dark"):
        _use_scheme(page, browser.base, scheme)
        one_domain = sorted(p.name for p in (browser.demo / "domains").glob("*.html"))[0]
        one_model = sorted(p.name for p in (browser.demo / "submissions").glob("*.html"))[0]
        for name in ("index.html", "domains/index.html", "multimodal.html", "judges.html",
                     "downloads.html", "methodology.html", "popularity.html",
                     f"domains/{one_domain}", f"submissions/{one_model}"):  # fmt: skip
            page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
            _wait_for_charts(page)
            found = axe.run(page).response["violations"]
            bad = [(v["id"], v["nodes"][0]["target"]) for v in found
                   if v["impact"] in ("serious", "critical")]  # fmt: skip
            assert not bad, f"{scheme} {name}: {bad}"
    _use_scheme(page, browser.base, "light")


def test_hostile_submission_stays_inert(browser: Browser) -> None:
    page = browser.page
    for name in ("index.html", "submissions/hostile.html", "submissions/index.html",
                 "domains/food.html", "judges.html", "multimodal.html"):  # fmt: skip
        page.goto(browser.base + "hostile/" + name)  # type: ignore[attr-defined]
        _wait_for_charts(page)
        assert page.locator("img[src=x]").count() == 0  # type: ignore[attr-defined]
        assert page.locator("a[href^='javascript']").count() == 0  # type: ignore[attr-defined]
    assert "<img src=x onerror=alert(1)>" in page.inner_text("article")  # type: ignore[attr-defined]
    # the theme's search shows indexed text as HTML: the name must arrive there escaped too
    page.click(".md-search__input")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !/initiali/i.test(document.querySelector('.md-search-result__meta').textContent)",
        timeout=15_000,
    )
    page.locator(".md-search__input").press_sequentially("onerror", delay=30)  # type: ignore[attr-defined]
    page.wait_for_selector(".md-search-result__item", timeout=15_000)  # type: ignore[attr-defined]
    assert page.locator(".md-search-result img").count() == 0  # type: ignore[attr-defined]
    assert not browser.dialogs


def test_screenshots(browser: Browser) -> None:
    page = browser.page
    site = browser.demo
    ARTIFACTS.mkdir(exist_ok=True)
    domain = sorted((site / "domains").glob("*.html"))
    domain_page = next(p for p in domain if p.name != "index.html").name
    shots = {"leaderboard.png": "index.html", "domain.png": f"domains/{domain_page}",
             "multimodal.png": "multimodal.html"}  # fmt: skip
    for file, name in shots.items():
        page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
        _wait_for_charts(page)
        page.screenshot(path=str(ARTIFACTS / file), full_page=True)  # type: ignore[attr-defined]
        assert (ARTIFACTS / file).stat().st_size > 10_000
    page.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    _use_scheme(page, browser.base, "dark")
    _wait_for_charts(page)
    overflow = page.evaluate(  # type: ignore[attr-defined]
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, "the page scrolls sideways on a phone"
    page.screenshot(path=str(ARTIFACTS / "leaderboard-phone-dark.png"))  # type: ignore[attr-defined]
    page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    _use_scheme(page, browser.base, "light")


def test_opened_from_disk_the_charts_render(browser: Browser) -> None:
    """`gamut run` suggests opening site/index.html directly: charts must render there too."""
    page = browser.page
    browser.errors.clear()
    for name in ("index.html", "judges.html"):
        page.goto((browser.demo / name).as_uri())  # type: ignore[attr-defined]
        _wait_for_charts(page)
        assert all(_charts_drawn(page)), name
    page.click(".md-tabs a:has-text('Multimodal vs text-only')")  # type: ignore[attr-defined]
    page.wait_for_url(re.compile(r"multimodal\.html$"))  # type: ignore[attr-defined]
    _wait_for_charts(page)
    assert not browser.errors, browser.errors
