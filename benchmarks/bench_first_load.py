"""First-load bytes of every page type at paper scale (1,813 questions, 14 models, 2 settings).

For each page type (leaderboard, domain, explorer list, explorer question, compare, judges,
model, downloads, submit) a fresh headless Chromium context opens the page from the built site
served on 127.0.0.1, waits until its charts are drawn and its page script has loaded its data,
then sums every response body gzip-compressed as a web server would. Targets: within the
figures measured before the site worked from file:// (leaderboard 0.64 MB, explorer question
0.15 MB gzipped). Also prints the explorer list's and the compare page's height.

Measured before (fetched JSON, every page script on every page, no paging), MB gzipped:
leaderboard 0.644, domain 0.641, explorer list 0.154 (66,664 px tall), explorer question 0.157,
compare 0.225 (68,867 px), judges 0.648, model 0.644, downloads 0.145, submit 0.147.
After: leaderboard 0.640, domain 0.637, explorer list 0.179 (2,630 px; its index now carries the
text-only form and the mean scores it searches and sorts by), explorer question 0.145, compare
0.223 (4,889 px), judges 0.644, model 0.637, downloads 0.141, submit 0.142.
Re-measured with more on the pages since: leaderboard 0.645, explorer list 0.184, explorer
question 0.150. Then the header search's index (52 kB gzipped) and worker (12 kB) loaded only when
the search is opened (assets/gamut-search.js): leaderboard 0.582, domain 0.579, explorer list
0.121, explorer question 0.087, compare 0.165, judges 0.587, model 0.582, downloads 0.085.

Then, for every HTML page of the site, what the browser must fetch before it can show the page:
the page itself, its render-blocking scripts (``<script src>`` without ``async``, ``defer`` or
``type="module"``) and its style sheets, each gzip-compressed; prints the largest (target <= 200 KB;
78-86 KB on the demo before; the charting library and the page data arrive after).

Run with ``python benchmarks/bench_first_load.py`` (``make bench`` runs every benchmark).
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

from yardsticks import report

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator.serve import make_server
from workbench.synthetic.paper import write_paper_scale

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
TARGETS = {"leaderboard": 0.64e6, "explorer question": 0.15e6}
_DRAWN = (
    "() => [...document.querySelectorAll('.gamut-chart')].every(e => "
    "e.getAttribute('data-rendered') === 'true') && [...document.querySelectorAll("
    "'#gamut-explorer, #gamut-compare')].every(e => e.hasAttribute('data-loaded'))"
)


def _pages(site: Path) -> dict[str, str]:
    domain = sorted(p.name for p in (site / "domains").glob("*.html") if p.name != "index.html")
    model = sorted(p.name for p in (site / "submissions").glob("*.html") if p.name != "index.html")
    q = sorted((site / "explorer" / "q").iterdir())[0].name.split(".")[0]
    return {
        "leaderboard": "index.html",
        "domain": f"domains/{domain[0]}",
        "explorer list": "explorer.html",
        "explorer question": f"explorer.html?question={q}",
        "compare": "compare.html",
        "judges": "judges.html",
        "model": f"submissions/{model[0]}",
        "downloads": "downloads.html",
        "submit": "submit.html",
    }


class _Blocking(HTMLParser):
    """The render-blocking scripts and the style sheets a page names."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src") and not {"async", "defer"} & a.keys():
            if a.get("type") != "module":
                self.found.append(str(a["src"]))
        elif tag == "link" and a.get("rel") == "stylesheet" and a.get("href"):
            self.found.append(str(a["href"]))


def _gzipped(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 6))


def blocking(site: Path) -> None:
    """Print the largest page with its render-blocking scripts and style sheets, gzipped."""
    sizes: dict[Path, int] = {}
    pages: dict[str, int] = {}
    for page in sorted(site.rglob("*.html")):
        parser = _Blocking()
        parser.feed(page.read_text(encoding="utf-8"))
        total = _gzipped(page)
        for ref in parser.found:
            rel = ref.split("?")[0].split("#")[0]
            path = (site / rel.lstrip("/") if rel.startswith("/") else page.parent / rel).resolve()
            if path not in sizes:
                sizes[path] = _gzipped(path)
            total += sizes[path]
        pages[page.relative_to(site).as_posix()] = total
    worst = max(pages, key=pages.__getitem__)
    kb = pages[worst] / 1024
    print(f"HTML + blocking scripts + CSS, gzipped: largest {kb:.1f} KB ({worst}), smallest "
          f"{min(pages.values()) / 1024:.1f} KB, over {len(pages)} pages "
          "(target <= 200 KB; demo before 78-86 KB)")  # fmt: skip
    report("first load, HTML + blocking scripts + CSS (largest page)", f"{kb:.1f} KB gzipped",
           "target 200 KB")  # fmt: skip


def measure(site: Path) -> None:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        print("first load in Chromium: skipped (no /usr/bin/chromium; `make browser-deps`)")
        return
    server = make_server(site.parent, port=0)
    base = f"http://127.0.0.1:{server.server_address[1]}/{site.name}/"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
            try:
                for kind, name in _pages(site).items():
                    page = browser.new_context().new_page()
                    bodies: list[bytes] = []
                    errors: list[str] = []
                    page.on("console", lambda m, e=errors: e.append(m.text)
                            if m.type == "error" else None)  # fmt: skip
                    page.on("response", lambda r, b=bodies: b.append(r.body())
                            if r.ok else None)  # fmt: skip
                    t = time.perf_counter()
                    page.goto(base + name)
                    page.wait_for_function(_DRAWN, timeout=60_000)
                    ready = time.perf_counter() - t
                    page.wait_for_load_state("networkidle")
                    packed = sum(len(gzip.compress(b, 6)) for b in bodies)
                    raw = sum(len(b) for b in bodies)
                    target = TARGETS.get(kind)
                    extra = f" (target <= {target / 1e6:.2f} MB)" if target else ""
                    line = (f"{kind:18} {packed / 1e6:.3f} MB gzipped, {raw / 1e6:.2f} MB raw, "
                            f"{len(bodies)} requests, ready at {ready:.2f} s, "
                            f"console errors {len(errors)}{extra}")  # fmt: skip
                    if kind in ("explorer list", "compare"):
                        height = page.evaluate("document.documentElement.scrollHeight")
                        line += f"; page height {height:,} px"
                    print(line, flush=True)
                    if target:
                        report(f"first load, {kind}", f"{packed / 1e6:.3f} MB gzipped",
                               f"target {target / 1e6:.2f} MB")  # fmt: skip
                    page.context.close()
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="gamut-bench-load-"))
    try:
        t0 = time.perf_counter()
        project = Project(load_config(write_paper_scale(work / "paper", n_models=14, n_judges=3)))
        pipeline.score(project)
        site = pipeline.build_site(project)
        print(f"setup (paper-scale data, scores, site): {time.perf_counter() - t0:.1f} s")
        blocking(site)
        measure(site)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
