"""The site at paper scale (1,813 questions, 14 models, 2 settings, 3 judges, 5.3 M verdicts).

Prints each figure beside its target and the baseline measured before this version:

- what the score step spends on the site data the build links (the explorer's data, the
  response and verdict downloads, made once per set of inputs);
- the site build, cold (wall and CPU time, the machine being shared), against bare mkdocs
  building the same generated pages: target <= 2.5 times bare mkdocs (before: 14.1 s against
  ~2.5 s); and once more with nothing changed (skipped): target <= 1 s;
- the largest HTML page: target <= 300 KB;
- download writing (time, CPU, peak memory): target <= 3 s, baseline 5.9 s and
  967 MB; the downloads' total size (baseline 84 MB) and how many times each verdict is stored
  (target <= 2, baseline 4);
- the leaderboard's first load in headless Chromium (HTML + JS + CSS + data, each response
  gzip-compressed as a web server would): target <= 0.7 MB with the chart drawn, baseline 5.2 MB
  raw / 1.58 MB gzipped and the chart on screen at 1.47 s; and that a page without a chart
  loads no charting library;
- the whole site's size (baseline 93 MB; a GitHub Pages site may hold 1 GB).

Run with ``python benchmarks/bench_site.py`` (``make bench`` runs every benchmark).
"""

from __future__ import annotations

import gzip
import multiprocessing as mp
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from yardsticks import report

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from generator.build import generate_pages, run_mkdocs
from generator.downloads import write_downloads
from generator.published import PUBLISHED, link_site_data, publish_site_data
from generator.serve import make_server
from generator.tables import load_tables
from scoring.questions import load_questions
from workbench.synthetic.paper import write_paper_scale

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
_DRAWN = (
    "() => [...document.querySelectorAll('.gamut-chart')].length > 0 && "
    "[...document.querySelectorAll('.gamut-chart')].every(e => "
    "e.getAttribute('data-rendered') === 'true')"
)


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def _downloads_child(results: str, questions: str, subs: str, docs: str, out: Any) -> None:
    """Write the downloads in a fresh process (so its peak memory is its own), the score step's
    verdict and response files linked in first, as a build does."""
    tables = load_tables(Path(results))
    qs = load_questions(Path(questions))
    page = link_site_data(tables, Path(questions), Path(subs), False, Path(docs), ("downloads",))
    assert page is not None, "the score step published no site data"
    wall, cpu = time.perf_counter(), time.process_time()
    dl = write_downloads(tables, Path(docs), public=False, questions=qs)
    out.put((time.perf_counter() - wall, time.process_time() - cpu, int(str(dl["bytes"]))))


def bench_downloads(project: Project, work: Path) -> None:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    docs = work / "dl-docs"
    docs.mkdir()
    proc = ctx.Process(
        target=_downloads_child,
        args=(
            str(project.results),
            str(project.questions_path),
            str(project.submissions_root),
            str(docs),
            queue,
        ),
    )
    proc.start()
    wall, cpu, size = queue.get()
    proc.join()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        f"download writing: {wall:.2f} s wall, {cpu:.2f} s CPU, peak {_mb(peak)} "
        f"(target <= 3 s; baseline 5.9 s, 967 MB)"
    )
    print(f"downloads' total size: {_mb(size)} (baseline 84 MB)")
    n = pq.read_metadata(project.results / "verdicts.parquet").num_rows
    stored = sum(
        pq.read_metadata(p).num_rows
        for p in (docs / "downloads").rglob("*.parquet")
        if "verdicts" in p.relative_to(docs / "downloads").parts[0]
    )
    csv_copies = [p.name for p in (docs / "downloads").rglob("*verdict*.csv*")]
    print(
        f"verdicts stored: {stored / n:.1f} times each ({n:,} verdicts; CSV copies: "
        f"{len(csv_copies)}) (target <= 2; baseline 4)"
    )


def bench_site_data(project: Project) -> None:
    """What the score step spends on the site data the build links (made once per set of
    inputs, checked on every score)."""
    spec = project.site_spec()
    assert spec.questions is not None and spec.submissions is not None
    for folder in (project.results / PUBLISHED).glob("site.*"):
        shutil.rmtree(folder)
    cpu = []
    for _ in range(2):  # made, then found current
        start = time.process_time()
        publish_site_data(spec.results, spec.questions, spec.submissions, spec.rubrics_public)
        cpu.append(time.process_time() - start)
    print(
        f"score step's site data (explorer data, response and verdict downloads): made in "
        f"{cpu[0]:.2f} s CPU once per set of inputs, found current in {cpu[1]:.2f} s CPU"
    )


def bare_mkdocs(project: Project, work: Path) -> tuple[float, float]:
    """Wall and CPU seconds of mkdocs alone building the pages a site build generates."""
    spec = project.site_spec()
    docs = work / "bare-docs"
    docs.mkdir()
    nav = generate_pages(spec, docs)
    t, cpu = time.perf_counter(), time.process_time()
    run_mkdocs(spec, docs, nav, work / "bare-site")
    return time.perf_counter() - t, time.process_time() - cpu


def bench_first_load(site: Path) -> None:
    if not CHROMIUM.exists():
        print("leaderboard first load: skipped (no /usr/bin/chromium; `make browser-deps`)")
        return
    from playwright.sync_api import sync_playwright

    served = site.parent
    server = make_server(served, port=0)
    base = f"http://127.0.0.1:{server.server_address[1]}/{site.name}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
            try:
                for name, charted in (("index.html", True), ("downloads.html", False)):
                    page = browser.new_context().new_page()
                    bodies: list[tuple[str, bytes]] = []
                    errors: list[str] = []
                    page.on("console", lambda m, e=errors: e.append(m.text)
                            if m.type == "error" else None)  # fmt: skip
                    page.on("response", lambda r, b=bodies: b.append((r.url, r.body()))
                            if r.ok else None)  # fmt: skip
                    t = time.perf_counter()
                    page.goto(base + name)
                    if charted:
                        page.wait_for_function(_DRAWN, timeout=60_000)
                    drawn = time.perf_counter() - t
                    page.wait_for_load_state("networkidle")
                    raw = sum(len(b) for _, b in bodies)
                    packed = sum(len(gzip.compress(b, 6)) for _, b in bodies)
                    plotly = sum(len(b) for u, b in bodies if "plotly" in u)
                    if charted:
                        print(
                            f"leaderboard first load: {_mb(packed)} gzipped, {_mb(raw)} raw, "
                            f"{len(bodies)} requests (plotly {_mb(plotly)} raw); chart drawn "
                            f"after {drawn:.2f} s; console errors: {len(errors)} "
                            "(target <= 0.7 MB gzipped; baseline 1.58 MB gzipped, 5.2 MB raw, "
                            "chart at 1.47 s)"
                        )
                    else:
                        print(
                            f"page without a chart ({name}): {_mb(packed)} gzipped, charting "
                            f"library loaded: {_mb(plotly)} (target 0)"
                        )
                    page.context.close()
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="gamut-bench-site-"))
    try:
        t0 = time.perf_counter()
        cfg = load_config(write_paper_scale(work / "paper", n_models=14, n_judges=3))
        project = Project(cfg)
        pipeline.score(project)
        tables = load_tables(project.results)
        lb = tables["leaderboard"]
        print(
            f"setup (synthetic data + score tables): {time.perf_counter() - t0:.1f} s; "
            f"{lb['submission_id'].nunique()} models, {lb['setting'].nunique()} settings, "
            f"{tables['by_domain']['domain'].nunique()} domains, {lb['judge'].nunique()} judges"
        )
        bench_site_data(project)
        bench_downloads(project, work)

        t, cpu = time.perf_counter(), time.process_time()
        site = pipeline.build_site(project)
        first, first_cpu = time.perf_counter() - t, time.process_time() - cpu
        t, cpu = time.perf_counter(), time.process_time()
        site = pipeline.build_site(project, force=True)
        again, again_cpu = time.perf_counter() - t, time.process_time() - cpu
        skipped: list[Path] = []
        t = time.perf_counter()
        pipeline.build_site(project, unchanged=skipped.append)
        unchanged = time.perf_counter() - t
        assert skipped, "the unchanged site was built again"
        print(f"site build with nothing changed (skipped): {unchanged:.3f} s (target <= 1 s)")
        report("site build, nothing changed", f"{unchanged:.3f} s", "target 1 s")
        bare, bare_cpu = bare_mkdocs(project, work)
        print(
            f"site build, cold: {first:.2f} s ({first_cpu:.2f} s CPU), again {again:.2f} s "
            f"({again_cpu:.2f} s CPU); bare mkdocs on the same pages: {bare:.2f} s ({bare_cpu:.2f} "
            f"s CPU): {again / bare:.1f}x wall, {again_cpu / bare_cpu:.1f}x CPU (target <= 2.5x; "
            "before 14.1 s against ~2.5 s)"
        )
        report("site build / bare mkdocs", f"{again_cpu / bare_cpu:.1f}x CPU", "target 2.5x")
        biggest = max(site.rglob("*.html"), key=lambda p: p.stat().st_size)
        print(
            f"largest HTML page: {biggest.relative_to(site)} "
            f"{biggest.stat().st_size / 1024:.1f} KB (target <= 300 KB)"
        )
        index = (site / "index.html").stat().st_size
        print(f"leaderboard index.html: {index / 1024:.1f} KB")
        total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        n_files = sum(1 for p in site.rglob("*") if p.is_file())
        print(
            f"whole site: {_mb(total)} in {n_files} files (baseline 93 MB; GitHub Pages limit 1 GB)"
        )
        bench_first_load(site)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
