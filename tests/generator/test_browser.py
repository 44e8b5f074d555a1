"""The built site in a real headless Chromium: every page renders its charts without console
errors, tables sort, filters filter, instant navigation re-renders charts, axe finds no serious
or critical accessibility problem, and hostile submitter text stays inert."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import pytest

from gamut import pipeline
from gamut.config import GamutConfig, load_config
from gamut.project import Project
from generator.serve import make_server
from generator.vendor import AXE, verified
from tests.demo_config import write_demo_config
from tests.generator.conftest import REPO, read_data_script
from tests.generator.fixture_tables import write_fixture_config

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = REPO / "test-artifacts"


def _demo_config(root: Path) -> GamutConfig:
    """The shipped demo with its outputs redirected into ``root``."""
    for part in ("submissions", "verdicts"):
        assert (REPO / "demo" / part).is_dir(), (
            f"demo/{part} missing: run gamut-workbench demo write"
        )
    return load_config(write_demo_config(root))


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
    column = "#leaderboard-table th:nth-child(3)"
    assert "Gamut" in page.inner_text(column)  # type: ignore[attr-defined]

    def values() -> list[float]:
        raw = page.eval_on_selector_all(  # type: ignore[attr-defined]
            "#leaderboard-table tbody tr:not([hidden]) td:nth-child(3)",
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
    """axe-core (pinned in generator/vendor.py, fetched by set-up, never shipped) on every page
    type in both palettes: no serious or critical violation; moderate ones are printed."""
    from axe_playwright_python.sync_playwright import Axe

    axe, page = Axe(axe_script=verified(AXE).read_text(encoding="utf-8")), browser.page
    assert not list(browser.demo.rglob(AXE.asset)), "axe-core is for the tests, not the site"
    moderate: dict[str, set[str]] = {}
    for scheme in ("light", "dark"):
        _use_scheme(page, browser.base, scheme)
        for kind, name in _page_types(browser.demo).items():
            page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
            _ready(page, name)
            _settle(page)
            found = axe.run(page).response["violations"]
            bad = [(v["id"], v["nodes"][0]["target"]) for v in found
                   if v["impact"] in ("serious", "critical")]  # fmt: skip
            assert not bad, f"{scheme} {kind} ({name}): {bad}"
            for v in found:
                if v["impact"] == "moderate":
                    moderate.setdefault(f"{v['id']} ({v['help']})", set()).add(kind)
    for rule, kinds in sorted(moderate.items()):
        print(f"axe moderate: {rule}: {', '.join(sorted(kinds))}")
    if not moderate:
        print("axe moderate: none")
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


def _first_question() -> str:
    first = (REPO / "demo" / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return str(json.loads(first)["question_id"])


def _first_model() -> str:
    return sorted(p.name for p in (REPO / "demo" / "submissions").iterdir() if p.is_dir())[0]


def _wait_loaded(page: object, selector: str, *, other_than: str = "", expect: str = "") -> str:
    """Wait until the page script has drawn its data (something else than ``other_than``, when
    the previous view is still on screen, or exactly ``expect``); returns what it loaded."""
    # The value comes from the same evaluation that saw it: a second read could land on another
    # page. Under the theme's instant navigation the address changes before the content is
    # swapped, so after a click only the expected view proves that the new page is drawn.
    wanted = f"v === {json.dumps(expect)}" if expect else f"v !== {json.dumps(other_than)}"
    found = page.wait_for_function(  # type: ignore[attr-defined]
        f"() => {{ const v = document.querySelector('{selector}')?.getAttribute('data-loaded');"
        f" return v && {wanted} ? v : null; }}",
        timeout=30_000,
    )
    return found.json_value()  # type: ignore[no-any-return]


def _settle(page: object) -> None:
    """Wait until no finite CSS transition or animation is running (the theme fades the tabs out
    when a permalink scrolls the page), so that an accessibility check sees the final colours."""
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => document.getAnimations().every(a => a.playState !== 'running'"
        " || a.effect?.getTiming().iterations === Infinity)",
        timeout=10_000,
    )


def _shot(page: object, name: str, full: bool = True) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full)  # type: ignore[attr-defined]
    assert (ARTIFACTS / name).stat().st_size > 5_000


def test_explorer_question_permalink_checklist_and_rationale(browser: Browser) -> None:
    page, qid, sid = browser.page, _first_question(), _first_model()
    browser.errors.clear()
    browser.elsewhere.clear()
    page.goto(f"{browser.base}demo/explorer.html?question={qid}&model={sid}")  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer") == qid
    data = read_data_script(browser.demo / "explorer" / "q" / f"{qid}.js")
    article = page.inner_text("article")  # type: ignore[attr-defined]
    assert data["question"] in article and data["text_only_question"] in article
    width = page.eval_on_selector("img.gamut-x-image", "e => e.naturalWidth")  # type: ignore[attr-defined]
    assert width > 0  # the demo image was copied into the site and loads
    focus = page.locator(f"tr#m-{sid}")  # type: ignore[attr-defined]
    assert "gamut-x-focus" in (focus.get_attribute("class") or "")
    assert focus.locator("details").evaluate("d => d.open")
    top = ".gamut-x-body > .gamut-table > table > tbody > tr"
    n_rows = page.locator(top).count()  # type: ignore[attr-defined]
    assert n_rows == len([r for r in data["rows"] if r["s"] == "multimodal"])
    # sortable by score: the Gamut column ascending
    page.click(".gamut-x-body th[data-col=gamut] button")  # type: ignore[attr-defined]
    scores = page.eval_on_selector_all(  # type: ignore[attr-defined]
        top + " > td:nth-child(2)", "els => els.map(e => parseFloat(e.dataset.sort))"
    )
    assert scores == sorted(scores)
    # the checklist: every check, then only those this model contradicted
    items = page.locator(".gamut-x-checklist li")  # type: ignore[attr-defined]
    assert items.count() == len(data["checks"])
    page.check("text=Checks this model contradicted")  # type: ignore[attr-defined]
    assert "only=contradicted" in page.url  # type: ignore[attr-defined]
    row = next(
        r for r in data["rows"] if r["s"] == "multimodal" and data["models"][r["m"]]["id"] == sid
    )
    visible = page.locator(".gamut-x-checklist li:not([hidden])")  # type: ignore[attr-defined]
    assert visible.count() == row["verdicts"].count("C")
    page.uncheck("text=Checks this model contradicted")  # type: ignore[attr-defined]
    page.check("text=Checks most models miss")  # type: ignore[attr-defined]
    missed = sum(c["most_missed"]["multimodal"] for c in data["checks"])
    assert visible.count() == missed
    page.uncheck("text=Checks most models miss")  # type: ignore[attr-defined]
    chip = page.locator(".gamut-x-checklist li").first.locator("button.gamut-chip").first  # type: ignore[attr-defined]
    chip.click()
    why = page.locator(".gamut-x-checklist li").first.locator(".gamut-x-why")  # type: ignore[attr-defined]
    why.wait_for(state="visible")
    rationales = read_data_script(browser.demo / data["rationales"])
    first_model = data["models"][data["rows"][0]["m"]]["id"]
    assert rationales["multimodal"][first_model][0] in why.inner_text()
    # the other setting: the text-only rows
    page.select_option(".gamut-x-question select[aria-label=Setting]", "text_only")  # type: ignore[attr-defined]
    assert "setting=text_only" in page.url  # type: ignore[attr-defined]
    assert "Text-only" in page.inner_text(".gamut-x-body caption")  # type: ignore[attr-defined]
    _shot(page, "explorer-question.png")
    assert not browser.errors, browser.errors
    assert not browser.elsewhere, browser.elsewhere


def test_explorer_list_filters_and_links(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/explorer.html")  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer") == "list"
    rows = page.locator(".gamut-x-list tbody tr:not([hidden])")  # type: ignore[attr-defined]
    n = len((REPO / "demo" / "questions.jsonl").read_text("utf-8").splitlines())
    assert rows.count() == n
    page.fill(".gamut-x-search", "noodle")  # type: ignore[attr-defined]
    assert 0 < rows.count() < n and "text=noodle" in page.url  # type: ignore[attr-defined]
    page.fill(".gamut-x-search", "no such question anywhere")  # type: ignore[attr-defined]
    assert rows.count() == 0
    assert "No question matches" in page.inner_text(".gamut-x-list [role=status]")  # type: ignore[attr-defined]
    page.fill(".gamut-x-search", "")  # type: ignore[attr-defined]
    _shot(page, "explorer-list.png", full=False)
    rows.first.locator("a").click()
    page.wait_for_url(re.compile(r"explorer\.html\?question="))  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer", other_than="list") != "error"


def test_compare_two_models_and_the_matrix(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/compare.html")  # type: ignore[attr-defined]
    first = _wait_loaded(page, "#gamut-compare")
    setting, a, b = first.split(":")
    assert setting == "multimodal" and a != b
    summary = page.inner_text(".gamut-c-summary")  # type: ignore[attr-defined]
    assert "minus" in summary and "95% paired bootstrap interval" in summary
    n = len((REPO / "demo" / "questions.jsonl").read_text("utf-8").splitlines())
    assert page.locator(".gamut-c-questions tbody tr").count() == n  # type: ignore[attr-defined]
    diffs = page.eval_on_selector_all(  # type: ignore[attr-defined]
        ".gamut-c-questions tbody tr td:nth-child(5)",
        "els => els.map(e => parseFloat(e.dataset.sort))",
    )
    assert diffs == sorted(diffs, reverse=True)
    options = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "select[name=b] option", "els => els.map(e => e.value)"
    )
    other = next(o for o in options if o not in (a, b))
    page.select_option("select[name=b]", other)  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        f"() => document.querySelector('#gamut-compare').dataset.loaded.endsWith(':{other}')"
    )
    assert f"b={other}" in page.url  # type: ignore[attr-defined]
    # the matrix: one row per model, significant cells marked, a cell links to its pair
    matrix = page.locator("#matrix-multimodal tbody tr")  # type: ignore[attr-defined]
    assert matrix.count() == len(options)
    marked = page.locator("#matrix-multimodal .gamut-pair-higher").count()  # type: ignore[attr-defined]
    cfg = json.loads(page.get_attribute("#gamut-compare", "data-config"))  # type: ignore[attr-defined]
    sig = [p for p in cfg["pairs"] if p["s"] == "multimodal" and p["sig"] and p["diff"] > 0]
    assert marked == len(sig)
    assert marked > 0
    _shot(page, "compare.png")
    # the page already shows a view of this form in its URL: wait for the navigation itself,
    # or the old page's state is read before the new one loads
    link = page.locator("#matrix-multimodal a.gamut-pair").first  # type: ignore[attr-defined]
    href = link.get_attribute("href")
    query = href.partition("compare.html?")[2] if href else ""
    pair = dict(part.split("=", 1) for part in query.split("&"))
    assert pair["setting"] == "multimodal" and pair["a"] != pair["b"]
    link.click()
    page.wait_for_url(re.compile(re.escape("compare.html?" + query) + "$"))  # type: ignore[attr-defined]
    _wait_loaded(page, "#gamut-compare", expect=f"multimodal:{pair['a']}:{pair['b']}")


def test_leaderboard_view_is_in_the_url_and_the_chart_follows(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html?setting=text_only&sort=gamut&dir=asc")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    visible = "#leaderboard-table tbody tr:not([hidden])"
    settings = page.eval_on_selector_all(visible, "els => els.map(e => e.dataset.setting)")  # type: ignore[attr-defined]
    assert settings and set(settings) == {"text_only"}
    scores = page.eval_on_selector_all(  # type: ignore[attr-defined]
        visible + " td.gamut-col-gamut", "els => els.map(e => parseFloat(e.dataset.sort))"
    )
    assert scores == sorted(scores)
    # the text-only view does not repeat its score in a Text-only column
    assert not page.is_visible("#leaderboard-table th.gamut-col-text_only")  # type: ignore[attr-defined]
    chart = "#leaderboard-chart [data-figure]"
    page.wait_for_function(f"() => document.querySelector('{chart}').dataset.shown")  # type: ignore[attr-defined]
    assert int(page.get_attribute(chart, "data-shown")) == len(settings)  # type: ignore[attr-defined]
    traces = page.evaluate(f"document.querySelector('{chart}').data.length")  # type: ignore[attr-defined]
    assert traces == 1
    # every demo model is closed-weights: this filter leaves nothing, and says so
    page.check("input[data-filter=open]")  # type: ignore[attr-defined]
    assert "open=yes" in page.url and "setting=text_only" in page.url  # type: ignore[attr-defined]
    assert page.locator(visible).count() == 0  # type: ignore[attr-defined]
    assert page.is_visible("[data-empty-for=leaderboard-table]")  # type: ignore[attr-defined]
    assert page.get_attribute(chart, "data-shown") == "0"  # type: ignore[attr-defined]
    page.reload()  # type: ignore[attr-defined]
    page.wait_for_function(f"() => document.querySelector('{chart}').dataset.shown === '0'")  # type: ignore[attr-defined]
    assert page.is_checked("input[data-filter=open]")  # type: ignore[attr-defined]
    assert page.is_visible("[data-empty-for=leaderboard-table]")  # type: ignore[attr-defined]
    page.uncheck("input[data-filter=open]")  # type: ignore[attr-defined]
    assert not page.is_visible("[data-empty-for=leaderboard-table]")  # type: ignore[attr-defined]
    assert "open=" not in page.url  # type: ignore[attr-defined]


def test_phone_leaderboard_shows_rank_model_and_score(browser: Browser) -> None:
    page = browser.page
    page.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
        _wait_for_charts(page)
        for col in ("rank", "model", "gamut"):
            box = page.locator(
                f"#leaderboard-table tbody tr td.gamut-col-{col}"
            ).first.bounding_box()  # type: ignore[attr-defined]
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, (col, box)
        _shot(page, "leaderboard-phone.png", full=False)
        page.goto(browser.base + "demo/domains/index.html")  # type: ignore[attr-defined]
        _wait_for_charts(page)
        width = page.eval_on_selector(".gamut-chart-wide", "e => e.getBoundingClientRect().width")  # type: ignore[attr-defined]
        assert width >= 600  # the heatmap keeps a readable size and scrolls in its box
        overflow = page.evaluate(  # type: ignore[attr-defined]
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1
        _shot(page, "domains-phone.png", full=False)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    clipped = page.eval_on_selector(  # type: ignore[attr-defined]
        "#leaderboard-table table", "t => t.scrollWidth - t.clientWidth"
    )
    assert clipped <= 1, "a leaderboard column is clipped at 1280 px"


def test_held_explorer_shows_counts_and_keeps_responses_inert(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "hostile/explorer.html?question=food-0000&model=hostile")  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer") == "food-0000"
    assert page.locator(".gamut-x-checklist").count() == 0  # type: ignore[attr-defined]
    assert "The rubrics are held" in page.inner_text("article")  # type: ignore[attr-defined]
    details = page.locator("tr#m-hostile details")  # type: ignore[attr-defined]
    assert "<img src=x onerror=alert(1)>" in details.inner_text()
    assert "Verdicts by tier" in details.inner_text()
    assert page.locator("img[src=x]").count() == 0  # type: ignore[attr-defined]
    assert not browser.dialogs


def test_serve_answers_a_missing_page_with_the_sites_404(browser: Browser) -> None:
    import urllib.error
    import urllib.request

    server = make_server(browser.demo, port=0)  # as `gamut site serve` serves a built site
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/no/such-page.html"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(url)
        assert info.value.code == 404
        body = info.value.read().decode("utf-8")
    finally:
        server.shutdown()
        server.server_close()
    assert body == (browser.demo / "404.html").read_text(encoding="utf-8")


def test_corrected_ppi_toggle_switches_score_rank_and_tie_columns(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    head = "#leaderboard-table th.gamut-col-"
    assert page.is_visible(head + "gamut") and page.is_visible(head + "rank")  # type: ignore[attr-defined]
    for col in ("gamut_ppi", "rank_ppi", "tie_ppi", "audited"):
        assert not page.is_visible(head + col), col  # type: ignore[attr-defined]
    page.check("#gamut-ppi-toggle")  # type: ignore[attr-defined]
    for col in ("gamut_ppi", "rank_ppi", "tie_ppi", "audited"):
        assert page.is_visible(head + col), col  # type: ignore[attr-defined]
    for col in ("gamut", "rank", "tie"):
        assert not page.is_visible(head + col), col  # type: ignore[attr-defined]
    audited = page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#leaderboard-table tbody tr:not([hidden]) td.gamut-col-audited",
        "els => els.map(e => e.textContent.trim())",
    )
    assert audited and all(int(a) >= 2 for a in audited)
    assert "simulated" in page.inner_text(".gamut-ppi-note")  # type: ignore[attr-defined]
    page.uncheck("#gamut-ppi-toggle")  # type: ignore[attr-defined]
    assert page.is_visible(head + "gamut") and not page.is_visible(head + "gamut_ppi")  # type: ignore[attr-defined]
    page.goto(browser.base + "demo/judges.html")  # type: ignore[attr-defined]
    assert page.is_visible("#judge-human-multimodal table")  # type: ignore[attr-defined]
    assert "Simulated audit" in page.inner_text("article")  # type: ignore[attr-defined]
    assert not browser.errors, browser.errors


def _page_types(site: Path) -> dict[str, str]:
    """One page of every type, by the name the tests report."""
    domain = sorted(p.name for p in (site / "domains").glob("*.html") if p.name != "index.html")
    model = sorted(p.name for p in (site / "submissions").glob("*.html") if p.name != "index.html")
    return {
        "leaderboard": "index.html",
        "domains": "domains/index.html",
        "domain": f"domains/{domain[0]}",
        "explorer list": "explorer.html",
        "explorer question": f"explorer.html?question={_first_question()}&model={_first_model()}",
        "compare": "compare.html",
        "multimodal": "multimodal.html",
        "popularity": "popularity.html",
        "judges": "judges.html",
        "models": "submissions/index.html",
        "model": f"submissions/{model[0]}",
        "downloads": "downloads.html",
        "methodology": "methodology.html",
        "submit": "submit.html",
    }


def _ready(page: object, name: str) -> None:
    _wait_for_charts(page)
    if name.startswith(("explorer", "compare")):
        _wait_loaded(page, "#gamut-" + name.split(".")[0])


def test_every_page_type_works_opened_from_a_folder(browser: Browser) -> None:
    """`gamut run` prints a file:// link: every page type, its data and the header search work
    there with no console error."""
    page, site = browser.page, browser.demo
    browser.errors.clear()
    for kind, name in _page_types(site).items():
        path, _, query = name.partition("?")
        page.goto((site / path).as_uri() + ("?" + query if query else ""))  # type: ignore[attr-defined]
        _ready(page, name)
        assert all(_charts_drawn(page)), kind
        assert not page.locator(".gamut-x-error").count(), kind  # type: ignore[attr-defined]
        assert not browser.errors, f"{kind}: {browser.errors}"
    page.goto((site / "explorer.html").as_uri())  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer") == "list"
    assert page.locator("#gamut-explorer tbody tr").count() > 0  # type: ignore[attr-defined]
    page.goto((site / "compare.html").as_uri())  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-compare").count(":") == 2
    assert "points" in page.inner_text(".gamut-c-summary")  # type: ignore[attr-defined]
    assert page.locator(".gamut-c-questions tbody tr").count() > 0  # type: ignore[attr-defined]
    # the header search, through the shipped iframe-worker shim instead of a web worker
    model = json.loads(page.get_attribute("#gamut-compare", "data-config"))["models"]  # type: ignore[attr-defined]
    word = next(iter(model.values()))[0]["name"].split()[0]
    page.click(".md-search__input")  # type: ignore[attr-defined]
    page.locator(".md-search__input").press_sequentially(word, delay=30)  # type: ignore[attr-defined]
    page.wait_for_selector(".md-search-result__item", timeout=15_000)  # type: ignore[attr-defined]
    assert not browser.errors, browser.errors
    assert not [u for u in browser.elsewhere if not u.startswith("file://")]


def test_no_page_is_wider_than_a_phone(browser: Browser) -> None:
    """At 390 px no page scrolls sideways as a whole: wide tables and charts scroll in their box."""
    page, site = browser.page, browser.demo
    page.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        wide = []
        names = [*_page_types(site).values(), *_pages(site)]
        for name in dict.fromkeys(names):
            page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
            _ready(page, name)
            over = page.evaluate(  # type: ignore[attr-defined]
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            if over > 1:
                wide.append((name, over))
        assert not wide, f"pages wider than 390 px (name, extra px): {wide}"
        # the heatmap's colour bar is on screen, not cut off
        page.goto(browser.base + "demo/judges.html")  # type: ignore[attr-defined]
        _wait_for_charts(page)
        right = page.evaluate(  # type: ignore[attr-defined]
            "Math.max(...[...document.querySelectorAll('.colorbar')].map("
            "e => e.getBoundingClientRect().right))"
        )
        assert right <= 390, f"a colour bar ends at {right} px"
        _shot(page, "judges-phone.png")
        # axis titles fit the chart (their unit goes to a second line on a phone)
        for name in ("index.html", "multimodal.html", "popularity.html"):
            page.goto(browser.base + "demo/" + name)  # type: ignore[attr-defined]
            _wait_for_charts(page)
            edges = page.evaluate(  # type: ignore[attr-defined]
                "[...document.querySelectorAll('.gamut-chart .xtitle, .gamut-chart .ytitle')]"
                ".map(e => [e.getBoundingClientRect().left, e.getBoundingClientRect().right])"
            )
            assert edges and all(lo >= 0 and hi <= 390 for lo, hi in edges), (name, edges)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]


def test_back_undoes_a_filter(browser: Browser) -> None:
    page = browser.page
    browser.errors.clear()
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    select = "form.gamut-filters select[data-filter=setting]"
    first = page.input_value(select)  # type: ignore[attr-defined]
    page.select_option(select, "")  # type: ignore[attr-defined]
    assert "setting=all" in page.url  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function(f"() => document.querySelector('{select}').value === '{first}'")  # type: ignore[attr-defined]
    assert page.url.endswith("index.html")  # type: ignore[attr-defined]
    # across the theme's instant navigation: filter, open another page, Back, Back
    page.select_option(select, "")  # type: ignore[attr-defined]
    page.click(".md-tabs a:has-text('Domains')")  # type: ignore[attr-defined]
    page.wait_for_url(re.compile(r"domains/index\.html$"))  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function(f"() => document.querySelector('{select}')?.value === ''")  # type: ignore[attr-defined]
    assert "setting=all" in page.url  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function(f"() => document.querySelector('{select}')?.value === '{first}'")  # type: ignore[attr-defined]
    assert page.url.endswith("index.html")  # type: ignore[attr-defined]
    assert not browser.errors, browser.errors
    # the explorer's search too
    page.goto(browser.base + "demo/explorer.html")  # type: ignore[attr-defined]
    _wait_loaded(page, "#gamut-explorer")
    page.fill(".gamut-x-search", "zzzz-nothing")  # type: ignore[attr-defined]
    assert "No question matches" in page.inner_text("#gamut-explorer [role=status]")  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function("() => document.querySelector('.gamut-x-search')?.value === ''")  # type: ignore[attr-defined]
    assert "No question" not in page.inner_text("#gamut-explorer [role=status]")  # type: ignore[attr-defined]
    assert "explorer.html" in page.url  # type: ignore[attr-defined]


def test_empty_filter_hides_the_chart(browser: Browser) -> None:
    """The demo has no open-weights model: "Open weights only" leaves no row, so no chart with
    empty axes either, and the page says what to change."""
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    assert page.locator("#leaderboard-table tbody tr[data-open=yes]").count() == 0  # type: ignore[attr-defined]
    page.check("input[data-filter=open]")  # type: ignore[attr-defined]
    page.wait_for_selector("#leaderboard-chart", state="hidden")  # type: ignore[attr-defined]
    assert page.is_visible("[data-empty-for=leaderboard-table]")  # type: ignore[attr-defined]
    assert page.locator("#leaderboard-table tbody tr:not([hidden])").count() == 0  # type: ignore[attr-defined]
    page.uncheck("input[data-filter=open]")  # type: ignore[attr-defined]
    page.wait_for_selector("#leaderboard-chart", state="visible")  # type: ignore[attr-defined]
    assert not page.is_visible("[data-empty-for=leaderboard-table]")  # type: ignore[attr-defined]


def test_search_box_has_a_border_in_light_mode(browser: Browser) -> None:
    page = browser.page
    _use_scheme(page, browser.base, "light")
    page.goto(browser.base + "demo/explorer.html")  # type: ignore[attr-defined]
    _wait_loaded(page, "#gamut-explorer")
    style = page.eval_on_selector(  # type: ignore[attr-defined]
        ".gamut-x-search",
        "e => { const s = getComputedStyle(e); return [s.borderTopWidth,"
        " s.borderTopStyle, s.borderTopColor, getComputedStyle(document.body).backgroundColor]; }",
    )
    assert float(style[0].removesuffix("px")) >= 1 and style[1] != "none"
    assert style[2] != style[3] and "rgba(0, 0, 0, 0)" not in style[2]


def test_compare_says_when_a_model_is_unknown(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/compare.html?a=no-such-model")  # type: ignore[attr-defined]
    _wait_loaded(page, "#gamut-compare")
    alert = page.inner_text("#gamut-compare [role=alert]")  # type: ignore[attr-defined]
    assert "no-such-model" in alert and "instead" in alert


def _small_pages(route: object) -> None:
    """Serve the page with a page size of 10 rows, so the demo's 42 questions span pages."""
    resp = route.fetch()  # type: ignore[attr-defined]
    body = resp.text().replace('data-page-size="50"', 'data-page-size="10"')
    route.fulfill(response=resp, body=body)  # type: ignore[attr-defined]


def test_explorer_pages_sorts_by_score_and_searches_both_forms(browser: Browser) -> None:
    page, site = browser.page, browser.demo
    index = read_data_script(site / "explorer" / "questions.js")["questions"]
    page.route("**/demo/explorer.html*", _small_pages)  # type: ignore[attr-defined]
    page.route("**/demo/compare.html*", _small_pages)  # type: ignore[attr-defined]
    try:
        page.goto(browser.base + "demo/explorer.html")  # type: ignore[attr-defined]
        _wait_loaded(page, "#gamut-explorer")
        body = "#gamut-explorer tbody tr"
        assert page.locator(body).count() == 10  # type: ignore[attr-defined]
        assert f"rows 1–10 of {len(index)}" in page.inner_text(".gamut-pager")  # type: ignore[attr-defined]
        page.click(".gamut-pager button:has-text('Next')")  # type: ignore[attr-defined]
        assert "rows 11–20" in page.inner_text(".gamut-pager")  # type: ignore[attr-defined]
        # one click: the hardest questions (lowest mean multimodal score) first, over all pages
        page.click("th[data-col=mean_multimodal] button")  # type: ignore[attr-defined]
        first = page.get_attribute(f"{body} td:nth-child(5)", "data-sort")  # type: ignore[attr-defined]
        hardest = min(q[7] for q in index if q[7] is not None)
        assert float(first) == hardest and "rows 1–10" in page.inner_text(".gamut-pager")  # type: ignore[attr-defined]
        # a word of the text-only form only, and a domain name, both find questions
        q = next(q for q in index if set(q[6].lower().split()) - set(q[4].lower().split()))
        word = sorted(set(q[6].lower().split()) - set(q[4].lower().split()), key=len)[-1]
        page.fill(".gamut-x-search", word.strip("?.,"))  # type: ignore[attr-defined]
        assert q[0] in page.inner_text("#gamut-explorer tbody")  # type: ignore[attr-defined]
        page.fill(".gamut-x-search", index[0][1].lower())  # type: ignore[attr-defined]
        assert page.locator(body).count() > 0  # type: ignore[attr-defined]
        # the compare question table pages too
        page.goto(browser.base + "demo/compare.html")  # type: ignore[attr-defined]
        _wait_loaded(page, "#gamut-compare")
        assert page.locator(".gamut-c-questions tbody tr").count() == 10  # type: ignore[attr-defined]
        assert "rows 1–10 of" in page.inner_text(".gamut-c-questions .gamut-pager")  # type: ignore[attr-defined]
    finally:
        page.unroute("**/demo/explorer.html*")  # type: ignore[attr-defined]
        page.unroute("**/demo/compare.html*")  # type: ignore[attr-defined]


def test_header_search_loads_its_index_only_when_opened(browser: Browser) -> None:
    """The search index (every page's text) and the search worker are not part of a page's
    first load over HTTP: they load when the search is opened, and the search then works."""
    page = browser.page.context.new_page()  # type: ignore[attr-defined]
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    try:
        page.goto(browser.base + "demo/index.html")
        _wait_for_charts(page)
        page.wait_for_load_state("networkidle")
        assert not [u for u in asked if "search_index" in u or "/workers/search" in u], asked
        page.click(".md-search__input")
        page.locator(".md-search__input").press_sequentially("panda", delay=30)
        page.wait_for_selector(".md-search-result__item", timeout=15_000)
        assert any(u.endswith("search/search_index.json") for u in asked)
        assert any("/workers/search" in u for u in asked)
    finally:
        page.close()


def test_stale_rows_are_marked_explained_and_can_be_hidden(
    browser: Browser, tmp_path: Path
) -> None:
    """The demo judged, then its primary judge's model changed and the tables scored again
    without rejudging: the leaderboard marks those rows stale (the reason in the tooltip and for
    screen readers), a filter hides them, and the model page lists them."""
    cfg = _with_site(_demo_config(tmp_path), browser.base + "stale/", browser.demo.parent / "stale")

    def build() -> None:
        project = Project(cfg)
        pipeline.judge(project)
        pipeline.write_verdicts(project)
        oracle = cfg.judges["oracle"].model_copy(update={"model": "demo-oracle-2"})
        project = Project(cfg.model_copy(update={"judges": {**cfg.judges, "oracle": oracle}}))
        pipeline.score(project)
        pipeline.build_site(project)

    with ThreadPoolExecutor(1) as pool:  # the judge runs its own event loop, not Playwright's
        pool.submit(build).result()
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    assert page.locator(".gamut-stamp-stale").count() == 0  # type: ignore[attr-defined]
    assert page.locator("[data-filter=fresh]").count() == 0  # type: ignore[attr-defined]
    assert page.locator("#leaderboard-table .gamut-stamp-current").count() > 0  # type: ignore[attr-defined]
    page.goto(browser.base + "stale/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    marks = page.locator("#leaderboard-table tbody tr:not([hidden]) .gamut-stamp-stale")  # type: ignore[attr-defined]
    assert marks.count() > 0 and marks.first.is_visible()
    assert "configured now demo-oracle-2" in marks.first.get_attribute("title")
    assert "configured now demo-oracle-2" in page.inner_text(".gamut-stale-note") + (  # type: ignore[attr-defined]
        marks.first.get_attribute("title")
    )
    page.check("[data-filter=fresh]")  # type: ignore[attr-defined]
    assert page.locator("#leaderboard-table tbody tr[data-fresh=no]:not([hidden])").count() == 0  # type: ignore[attr-defined]
    assert "fresh=yes" in page.url  # type: ignore[attr-defined]
    page.uncheck("[data-filter=fresh]")  # type: ignore[attr-defined]
    first_model = "#leaderboard-table tbody tr:not([hidden]) .gamut-col-model a"
    href = page.get_attribute(first_model, "href")  # type: ignore[attr-defined]
    page.goto(urljoin(page.url, href))  # type: ignore[attr-defined]
    note = page.inner_text(".gamut-stale-note")  # type: ignore[attr-defined]
    assert "judge oracle: judged by model demo-oracle, configured now demo-oracle-2" in note
    assert page.locator(".gamut-col-stamp .gamut-stamp-stale").count() > 0  # type: ignore[attr-defined]
    assert not browser.errors


def test_a_response_links_to_how_it_was_judged(browser: Browser) -> None:
    """From a response in the explorer, one link opens the judge's prompt template and request
    settings (HELM's instance viewer has this)."""
    from scoring.judge.prompt import load_template

    page, qid, sid = browser.page, _first_question(), _first_model()
    browser.errors.clear()
    page.goto(f"{browser.base}demo/explorer.html?question={qid}&model={sid}")  # type: ignore[attr-defined]
    assert _wait_loaded(page, "#gamut-explorer") == qid
    link = page.locator(f"tr#m-{sid} details .gamut-x-judged a")  # type: ignore[attr-defined]
    assert link.is_visible() and link.inner_text() == "how this was judged"
    responses = page.locator(".gamut-x-body > .gamut-table > table > tbody > tr")  # type: ignore[attr-defined]
    assert page.locator(".gamut-x-judged").count() == responses.count()  # type: ignore[attr-defined]
    link.click()
    page.wait_for_url("**/demo/judging/v1.html#judge-oracle")  # type: ignore[attr-defined]
    page.wait_for_selector("pre.gamut-template")  # type: ignore[attr-defined]
    template = load_template("v1")
    shown = page.locator("pre.gamut-template").all_inner_texts()  # type: ignore[attr-defined]
    assert shown == [template.system, template.shared, template.check, template.reask]
    row = page.locator("tr[data-judge=oracle]").inner_text()  # type: ignore[attr-defined]
    assert "demo-oracle" in row and "replay" in row and "direct" in row and "400" in row
    assert not browser.errors, browser.errors


def test_an_opened_response_fits_a_phone(browser: Browser) -> None:
    """At 390 px each response is a block: the opened one takes the screen's width, with no
    sideways scroll of the responses table."""
    page, qid, sid = browser.page, _first_question(), _first_model()
    page.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        page.goto(f"{browser.base}demo/explorer.html?question={qid}&model={sid}")  # type: ignore[attr-defined]
        assert _wait_loaded(page, "#gamut-explorer") == qid
        details = page.locator(f"tr#m-{sid} details")  # type: ignore[attr-defined]
        assert details.evaluate("d => d.open")
        box = details.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        assert box["width"] >= 300, "the opened response is not full-width"
        extra = page.eval_on_selector(  # type: ignore[attr-defined]
            ".gamut-x-responses", "e => e.scrollWidth - e.clientWidth"
        )
        assert extra <= 1, f"the responses table scrolls {extra} px sideways"
        inner = details.evaluate(
            "d => [...d.querySelectorAll('.gamut-table')].map(e => e.scrollWidth - e.clientWidth)"
        )
        assert inner and max(inner) <= 1, f"its verdict tables scroll sideways: {inner}"
        labels = page.eval_on_selector_all(  # type: ignore[attr-defined]
            f"tr#m-{sid} td", "els => els.map(e => getComputedStyle(e, '::before').content)"
        )
        assert '"Gamut "' in labels  # a score says which column it is
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]


def test_the_corrected_view_is_kept_in_the_url(browser: Browser) -> None:
    page = browser.page
    head = "#leaderboard-table th.gamut-col-"
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    page.check("#gamut-ppi-toggle")  # type: ignore[attr-defined]
    assert "ppi=yes" in page.url  # type: ignore[attr-defined]
    page.reload()  # type: ignore[attr-defined]
    page.wait_for_selector(head + "gamut_ppi", state="visible")  # type: ignore[attr-defined]
    assert page.is_checked("#gamut-ppi-toggle")  # type: ignore[attr-defined]
    assert not page.is_visible(head + "gamut")  # type: ignore[attr-defined]
    page.uncheck("#gamut-ppi-toggle")  # type: ignore[attr-defined]
    assert "ppi=" not in page.url  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.wait_for_function("() => document.querySelector('#gamut-ppi-toggle').checked")  # type: ignore[attr-defined]
    assert page.is_visible(head + "gamut_ppi")  # type: ignore[attr-defined]


def test_the_whole_header_cell_sorts(browser: Browser) -> None:
    """A click on a header cell's padding, away from its text, sorts; so does Enter on it."""
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    _wait_for_charts(page)
    th = page.locator("#leaderboard-table th.gamut-col-gamut")  # type: ignore[attr-defined]
    cell, text = (
        th.bounding_box(),
        th.locator("button").evaluate(
            "b => { const r = document.createRange(); r.selectNodeContents(b);"
            " const x = r.getBoundingClientRect(); return {x: x.x, y: x.y, width: x.width,"
            " height: x.height}; }"
        ),
    )
    x, y = cell["x"] + cell["width"] - 2, cell["y"] + cell["height"] - 2
    assert x > text["x"] + text["width"] or y > text["y"] + text["height"], "not in the padding"
    page.mouse.click(x, y)  # type: ignore[attr-defined]
    assert th.get_attribute("aria-sort") == "ascending"
    page.mouse.click(cell["x"] + 2, cell["y"] + 2)  # type: ignore[attr-defined]
    assert th.get_attribute("aria-sort") == "descending"
    th.locator("button").focus()
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    assert th.get_attribute("aria-sort") == "ascending"


def test_the_judges_summary_comes_before_the_tables(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/judges.html")  # type: ignore[attr-defined]
    before = page.evaluate(  # type: ignore[attr-defined]
        "() => { const h = [...document.querySelectorAll('article h2')].find("
        "e => e.textContent.startsWith('What this data says'));"
        " const after = (a, b) =>"
        " !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);"
        " const t = document.querySelector('article table');"
        " const li = h && [...document.querySelectorAll('article li')].find(e => after(h, e));"
        " return !!li && after(li, t); }"
    )
    assert before, "the plain-language summary is not above the first table"


def test_every_top_tab_is_on_screen_at_1280(browser: Browser) -> None:
    page = browser.page
    page.goto(browser.base + "demo/index.html")  # type: ignore[attr-defined]
    tabs = page.eval_on_selector_all(  # type: ignore[attr-defined]
        ".md-tabs__link",
        "els => els.map(e => [e.textContent.trim(), e.getBoundingClientRect().right])",
    )
    width = page.eval_on_selector(".md-tabs__list", "e => e.getBoundingClientRect().right")  # type: ignore[attr-defined]
    assert tabs and tabs[-1][0] == "Cite"
    cut = [name for name, right in tabs if right > min(width, 1280)]
    assert not cut, f"tabs cut off at 1280 px: {cut}"


def test_column_names_break_between_words_only(browser: Browser) -> None:
    """On a phone a long column name on the Downloads page wraps after an underscore, never
    inside a word: each of its pieces sits on one line."""
    page = browser.page
    page.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        page.goto(browser.base + "demo/downloads.html")  # type: ignore[attr-defined]
        split, wrapped = page.evaluate(  # type: ignore[attr-defined]
            "() => { let split = [], wrapped = 0;"
            " document.querySelectorAll('.gamut-dictionary td:first-child code').forEach(c => {"
            "  if (c.getClientRects().length > 1) wrapped++;"
            "  c.childNodes.forEach(n => { if (n.nodeType !== 3) return;"
            "   const r = document.createRange(); r.selectNodeContents(n);"
            "   if (r.getClientRects().length > 1) split.push(n.textContent); }); });"
            " return [split, wrapped]; }"
        )
        assert not split, f"column names broken inside a word: {split[:5]}"
        assert wrapped > 0, "no column name wraps at 390 px: the test shows nothing"
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]


def test_a_site_of_unpublished_datasets_says_submissions_are_not_open(
    browser: Browser, tmp_path: Path
) -> None:
    """While a dataset id of the config is still the live config's placeholder, the home and
    Submit pages say that submissions are not open yet and what works now; the demo's pages do
    not. (The site needs the questions file, so this site keeps the fixture's questions and takes
    the live config's rubrics id.)"""
    live = load_config(REPO / "gamut.toml").benchmark
    assert not live.published
    cfg = load_config(write_fixture_config(tmp_path, rubrics_public=False))
    assert cfg.benchmark.published
    cfg = cfg.model_copy(update={"benchmark": cfg.benchmark.model_copy(
        update={"rubrics": live.rubrics})})  # fmt: skip
    pipeline.build_site(
        Project(_with_site(cfg, browser.base + "live/", browser.demo.parent / "live"))
    )
    page = browser.page
    notice = ".admonition:has(.admonition-title:text-is('Submissions are not open yet'))"
    for site, shown in (("live", True), ("demo", False)):
        for name in ("index.html", "submit.html"):
            page.goto(f"{browser.base}{site}/{name}")  # type: ignore[attr-defined]
            assert page.locator(notice).count() == int(shown), (site, name)  # type: ignore[attr-defined]
    page.goto(browser.base + "live/submit.html")  # type: ignore[attr-defined]
    text = page.inner_text(notice)  # type: ignore[attr-defined]
    assert "gamut submission validate" in text and "--config demo/gamut.toml" in text
    top = page.evaluate(  # type: ignore[attr-defined]
        "() => document.querySelector('article h1').nextElementSibling.className"
    )
    assert "admonition" in top, "the notice is not right under the Submit page's title"
