"""Building the site from fixture score tables: escaping, held rubrics, links, assets."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import GamutConfig
from gamut.project import Project
from generator.vendor import IFRAME_WORKER, PLOTLY
from scoring.errors import GamutError, ProblemsError
from tests.generator.conftest import (
    REPO,
    assert_no_rubric_text,
    found_in,
    rubric_strings,
    site_texts,
)
from tests.generator.fixture_tables import HOSTILE_LINK, HOSTILE_NAME, MODELS

pytestmark = pytest.mark.slow
TEMPLATES = REPO / "generator" / "templates"
PAGES = [
    "index.html",
    "domains/index.html",
    "domains/food.html",
    "domains/local-places.html",
    "multimodal.html",
    "popularity.html",
    "judges.html",
    "submissions/index.html",
    "downloads.html",
    "methodology.html",
    "submit.html",
    "maintainers.html",
    *[f"submissions/{sid}.html" for sid, *_ in MODELS],
]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.figures: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("href", "src"):
            if a.get(key):
                # a canonical or alternate <link> names a page, it loads nothing
                kind = "a" if a.get("rel") in ("canonical", "alternate") else tag
                self.refs.append((kind, str(a[key])))
        if a.get("data-figure"):
            self.figures.append(str(a["data-figure"]))


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_every_page_is_built(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    for page in PAGES:
        assert (site / page).is_file(), page


def test_hostile_submission_is_inert_text(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    for path in site.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "<img src=x" not in text, path
        assert 'href="javascript:' not in text.lower(), path
        assert "onerror=alert(1)>" not in text.replace("&gt;", ""), path
    page = (site / "submissions" / "hostile.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert f"<span>{HOSTILE_LINK}</span>" in page
    assert "Evil &amp; &lt;Co&gt;" in page
    assert HOSTILE_NAME not in (site / "index.html").read_text(encoding="utf-8")


def test_held_rubrics_never_reach_the_site(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    assert assert_no_rubric_text(site) > 30


def test_public_rubrics_are_published(public_site: tuple[GamutConfig, Path]) -> None:
    _, site = public_site
    df = pd.read_parquet(site / "downloads" / "verdicts.parquet")
    assert {"check_text", "rationale"} <= set(df.columns)
    assert df["check_text"].isin(rubric_strings()).all()
    # the leak search of the held build would have seen it
    sid = str(df["submission_id"].iloc[0])
    text = dict(site_texts(site))[site / "downloads" / "verdicts" / f"{sid}.parquet"]
    assert found_in({str(df["check_text"].iloc[0])}, text)


def test_internal_links_resolve_and_nothing_loads_from_elsewhere(
    held_site: tuple[GamutConfig, Path],
) -> None:
    _, site = held_site
    for page in PAGES:
        path = site / page
        for tag, ref in _parse(path).refs:
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https"):
                assert tag == "a", f"{page} loads {ref} from the network"
                continue
            if parts.scheme or ref.startswith("#"):
                continue
            target = (path.parent / parts.path).resolve()
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{page}: broken link {ref}"


def test_plotly_is_the_pinned_cartesian_bundle_loaded_on_demand(
    held_site: tuple[GamutConfig, Path],
) -> None:
    _, site = held_site
    bundle = (site / "assets" / PLOTLY.asset).read_bytes()
    assert hashlib.sha256(bundle).hexdigest() == PLOTLY.sha256
    assert not (site / "assets" / "plotly.min.js").exists()
    assert f"plotly.js (cartesian - minified) v{PLOTLY.version}" in bundle[:300].decode()
    for page in PAGES:
        text = (site / page).read_text(encoding="utf-8")
        # no page names the library itself: gamut.js loads it where a chart is
        assert "plotly" not in text.lower().replace("plotly-cartesian", ""), page
        assert "Plotly.newPlot" not in text and len(text) < 300_000, page
        assert "fonts.googleapis" not in text and "cdn." not in text, page
        assert "unpkg.com" not in text and IFRAME_WORKER.asset in text, page


def test_figures_have_axis_titles_and_valid_json(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    n = 0
    for page in PAGES:
        for raw in _parse(site / page).figures:
            fig = json.loads(raw)
            n += 1
            assert fig["data"], page
            assert fig["layout"]["xaxis"]["title"]["text"], page
            assert fig["layout"]["yaxis"]["title"]["text"], page
    assert n >= 15


def test_numbers_are_shown_with_one_decimal(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    text = (site / "index.html").read_text(encoding="utf-8")
    cells = re.findall(r'class="gamut-ci">\[(-?\d+\.\d+), (-?\d+\.\d+)\]', text)
    assert cells
    assert all(len(a.split(".")[1]) == 1 and len(b.split(".")[1]) == 1 for a, b in cells)
    assert "Demo data" in text and "oracle" in text and "rv-test-0001" in text


def test_judges_page_shows_kappa_per_kind(held_site: tuple[GamutConfig, Path]) -> None:
    _, site = held_site
    text = (site / "judges.html").read_text(encoding="utf-8")
    mm, to = text.split('id="text-only"')
    least = "agree least on sequence checks (kappa 0.31 [0.23, 0.38], lenient and partisan)"
    assert least in mm.split('id="verdict-agreement-by-check-kind"')[1]
    kinds = to.split('id="verdict-agreement-by-check-kind_1"')[1].split("</table>")[0]
    assert "<caption>Verdict agreement by check kind" in kinds and 'scope="col"' in kinds
    # text-only sequence checks were judged by no two judges: dashes and zero counts
    row = next(r for r in kinds.split("<tr>") if '"gamut-col-kind">sequence<' in r)
    cells = re.findall(r'class="gamut-col-(k|n)\d gamut-num">([^<]*)<', row)
    assert cells == [("k", "–"), ("n", "0")] * 3
    assert "least on step checks" in to and "least on sequence" not in to


def test_no_stale_pages_after_a_submission_is_removed(tmp_path: Path) -> None:
    from gamut.config import load_config
    from tests.generator.fixture_tables import publish_fixture_site_data, write_fixture_config

    path = write_fixture_config(tmp_path, rubrics_public=False)
    publish_fixture_site_data(path)
    cfg = load_config(path)
    site = pipeline.build_site(Project(cfg))
    assert (site / "submissions" / "tiny-lm.html").is_file()
    results = cfg.path(cfg.store.results)
    for table in results.glob("*.parquet"):
        df = pd.read_parquet(table)
        if "submission_id" in df.columns:
            df[df["submission_id"].astype(str) != "tiny-lm"].to_parquet(table)
    publish_fixture_site_data(path)  # scored again
    site = pipeline.build_site(Project(cfg))
    assert not (site / "submissions" / "tiny-lm.html").exists()
    assert not (site / "downloads" / "verdicts" / "tiny-lm.parquet").exists()
    assert (site / "downloads" / "verdicts" / "zen-omni.parquet").is_file()
    assert "Tiny LM" not in (site / "index.html").read_text(encoding="utf-8")
    assert not [p for p in tmp_path.glob(".*") if p.name != ".gamut"]


def test_missing_tables_are_all_reported(tmp_path: Path) -> None:
    from gamut.config import load_config
    from tests.generator.fixture_tables import write_fixture_config

    cfg = load_config(write_fixture_config(tmp_path, rubrics_public=False))
    results = cfg.path(cfg.store.results)
    (results / "judge_tau.parquet").unlink()
    (results / "provenance.json").unlink()
    with pytest.raises(ProblemsError) as info:
        pipeline.build_site(Project(cfg))
    assert len(info.value.problems) == 2
    assert "gamut score" in str(info.value)


def test_a_failed_build_leaves_no_temporary_folders(tmp_path: Path) -> None:
    from gamut.config import load_config
    from tests.generator.fixture_tables import write_fixture_config

    cfg = load_config(write_fixture_config(tmp_path, rubrics_public=False))
    (cfg.path(cfg.store.results) / "verdicts.parquet").write_bytes(b"not parquet")
    with pytest.raises(GamutError, match="gamut judge"):
        pipeline.build_site(Project(cfg))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".docs.", ".site."))]
    assert not (tmp_path / "site").exists()


def _staging(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith((".docs.", ".site.")))


def test_a_build_killed_outright_is_cleaned_up_by_the_next(tmp_path: Path) -> None:
    """A real SIGKILL of `gamut site build` once its staging folders hold pages; the next build
    removes them (not one a live process still fills) and builds the site."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.generator.fixture_tables import write_fixture_config

    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    gamut = str(Path(sys.executable).parent / "gamut")
    for _ in range(5):  # the build may win the race; it takes about 1.5 s
        proc = subprocess.Popen([gamut, "site", "build", "--config", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            docs = [p for p in _staging(tmp_path) if p.name.startswith(".docs.")]
            if docs and any(p.is_file() for p in docs[0].rglob("*.md")):
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.005)
        proc.wait(timeout=60)
        if proc.returncode == -signal.SIGKILL:
            break
    assert proc.returncode == -signal.SIGKILL, "the build always finished before the kill"
    left = _staging(tmp_path)
    assert {p.name.split(".")[1] for p in left} == {"docs", "site"}, left
    assert all(p.name.split(".")[2] == str(proc.pid) for p in left)
    # a staging folder of a build still running (this process) is not touched
    live = tmp_path / f".site.{os.getpid()}.abcdefgh"
    live.mkdir()

    done = subprocess.run([gamut, "site", "build", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _staging(tmp_path) == [live]
    assert (tmp_path / "site" / "index.html").is_file()
    names = [".docs.1.abcdefgh/", ".site.1.abcdefgh/", "site_src/.docs.1.abcdefgh/",
             "site_src/.generated.old.1.abcdefgh/"]  # fmt: skip
    ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", *names],
                             capture_output=True, text=True)  # fmt: skip
    assert ignored.stdout.split() == names, "staging folders are in .gitignore"


def test_only_staging_folders_of_dead_processes_are_removed(tmp_path: Path) -> None:
    import os
    import subprocess

    from scoring.storage import make_staging_folder, remove_stale_staging

    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = make_staging_folder(tmp_path, ".site.")
    assert mine.name.startswith(f".site.{os.getpid()}.")
    stale = tmp_path / f".site.{dead.pid}.abcdefgh"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "page.md").write_text("response text")
    other = tmp_path / ".site.backup01"  # not a staging name: someone's folder
    other.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    link = tmp_path / f".site.{dead.pid}.linklink"
    link.symlink_to(target)
    removed = remove_stale_staging(tmp_path, (".docs.", ".site."))
    assert removed == [stale] and not stale.exists()
    assert mine.is_dir() and other.is_dir() and link.is_symlink() and (target / "keep.txt").exists()


def test_how_it_was_judged_shows_the_template_and_no_check_text(
    held_site: tuple[GamutConfig, Path],
) -> None:
    """Held rubrics: the judging page of the prompt version holds the template (placeholders,
    request settings) and not one check text; every explorer question links to it."""
    from scoring.judge.prompt import load_template
    from scoring.rubric_io import compile_all, load_rubrics
    from tests.generator.conftest import DEMO_RUBRICS, found_in, read_data_script

    _, site = held_site
    page = site / "judging" / "v1.html"
    text = page.read_text(encoding="utf-8")
    template = load_template("v1")
    first = template.system.splitlines()[0]
    assert first.replace('"', "&#34;") in text or first in text
    assert "{{check}}" in text and "{{response}}" in text and template.digest in text
    assert 'id="judge-oracle"' in text and "demo-oracle" in text
    checks = {c.text for cs in compile_all(load_rubrics([DEMO_RUBRICS])).values() for c in cs}
    article = text[text.index("<article") : text.index("</article>")]
    assert not found_in(checks, article)
    assert "check_text" not in article
    q = read_data_script(next((site / "explorer" / "q").glob("*.js")))
    assert q["judging"].startswith("judging/v1.html#judge-")
    assert (site / q["judging"].split("#")[0]).is_file()
    judges = (site / "judges.html").read_text(encoding="utf-8")
    assert 'href="judging/v1.html#judge-oracle"' in judges
