"""The built demo site through the Nu HTML Checker (the W3C validator), with its CSS and SVG.

The checker is npm's ``vnu-jar``, fetched once by exact version from the npm registry and checked
against the integrity hash and SHA-256 committed here, as set-up fetches plotly.js
(``generator/vendor.py``); it runs on Java from Debian's packages (``make checker-deps`` installs
it when missing, and ``make test`` runs that). Every error fails the test except the theme's own
(mkdocs-material's templates), which are listed in ``KNOWN`` with where they come from; a known
error the checker no longer reports fails too, so the list stays true.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.vendor import Bundle, fetch
from tests.demo_config import write_demo_config

pytestmark = pytest.mark.slow

VNU = Bundle(
    package="vnu-jar",
    version="26.9.27",
    member="package/build/dist/vnu.jar",
    integrity="sha512-TkQd5DFfOaWC9ebtvozTsrH2Vaod3jYg+vrOeREzIXxBexLz9+rS2DNtjn7+RPUiZhgli0SghgBX6RJRNea0KA==",
    sha256="22f15dd39a33bed929d2a5c0cddf5946849a647eca9272bf4d5d00bc7e7a4d47",
    asset="vnu.jar",
    max_bytes=64 << 20,
)


@dataclass(frozen=True)
class Known:
    """An error of the theme's templates: the message and the markup it is reported on."""

    message: str
    extract: str
    source: str


#: mkdocs-material's own markup (``partials/nav-item.html``, ``base.html``, ``partials/toc.html``).
KNOWN = [
    Known(
        r"Attribute “autocomplete” is only allowed when the input type is ",
        r'<input class="md-toggle" data-md-toggle="(drawer|search)" type="checkbox"',
        "base.html: the drawer and search toggles are checkboxes with autocomplete=off",
    ),
    Known(
        r"Bad value “” for attribute “tabindex” on element “label”",
        r'<label class="md-nav__link[^"]*" for="__nav_\d+" id="__nav_\d+_label" tabindex="">',
        "partials/nav-item.html: a section label's tabindex is empty when it is not a link",
    ),
    Known(
        r"The value of the “for” attribute of the “label” element must be the ID of a non-hidden",
        r'<label class="md-nav__title" for="__toc">',
        "partials/toc.html: the table of contents' title labels the hidden __toc toggle",
    ),
]


def _known(msg: dict[str, Any]) -> Known | None:
    for k in KNOWN:
        if re.search(k.message, msg["message"]) and re.search(k.extract, msg.get("extract", "")):
            return k
    return None


def _where(msg: dict[str, Any], site: Path) -> str:
    path = msg.get("url", "").removeprefix("file:").removeprefix(str(site) + "/")
    return f"{path}:{msg.get('lastLine', msg.get('firstLine', '?'))}"


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = write_demo_config(tmp_path_factory.mktemp("nu-demo"))
    done = subprocess.run([sys.executable, "-m", "gamut", "run", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return cfg.parent / "site"


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        pytest.fail("java is missing: `make checker-deps` installs Debian's default-jre-headless")
    return java


def _check(files: list[str]) -> list[dict[str, Any]]:
    """The checker's errors on ``files``: pages, stylesheets and images, each kind on its own
    (checked together, with ``--also-check-css``, its pages' line numbers come out one short)."""
    jar = fetch(VNU)
    errors: list[dict[str, Any]] = []
    for suffix, flag in ((".html", "--html"), (".css", "--css"), (".svg", "--svg")):
        batch = [f for f in files if f.endswith(suffix)]
        if not batch:
            continue
        done = subprocess.run(
            [_java(), "-jar", str(jar), "--format", "json", flag, "--exit-zero-always", *batch],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        messages: list[dict[str, Any]] = json.loads(done.stderr or done.stdout)["messages"]
        errors += [m for m in messages if m["type"] in ("error", "non-document-error")]
    return errors


def _report(errors: list[dict[str, Any]], site: Path) -> str:
    return "\n".join(
        f"{_where(m, site)}: {m['message']} (in {m.get('extract', '').strip()!r}); fix the "
        "template or asset that writes it"
        for m in errors
    )


def test_the_demo_site_has_no_html_css_or_svg_errors_of_its_own(demo_site: Path) -> None:
    files = sorted(str(p) for p in demo_site.rglob("*") if p.suffix in (".html", ".css", ".svg"))
    pages = {Path(f).relative_to(demo_site).as_posix() for f in files if f.endswith(".html")}
    kinds = {"index.html", "domains/food.html", "explorer.html", "compare.html", "judges.html",
             "submissions/brassbell-bold.html", "downloads.html", "submit.html"}  # fmt: skip
    assert kinds <= pages, kinds - pages  # every page type (the explorer's questions are drawn
    # by its script from the data file: the checker sees the page, not what the script draws)
    errors = _check(files)
    ours = [m for m in errors if _known(m) is None]
    assert not ours, "the Nu HTML Checker reports errors of the project's own pages:\n" + _report(
        ours, demo_site
    )
    seen = Counter(k.source for m in errors if (k := _known(m)) is not None)
    gone = [k.source for k in KNOWN if not seen[k.source]]
    assert not gone, f"no longer reported by the checker; remove from KNOWN: {gone}"
    print(f"\nNu HTML Checker {VNU.version}: {len(files)} files, {len(errors)} errors, all the "
          f"theme's known ones ({dict(seen)})")  # fmt: skip


def test_an_error_of_our_own_markup_is_reported_with_its_file_and_line(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text('<!doctype html>\n<html lang="en"><head><title>t</title></head>\n<body>\n'
                    '<p id="dup">a</p><p id="dup">b</p>\n</body></html>\n')  # fmt: skip
    ours = [m for m in _check([str(page)]) if _known(m) is None]
    assert [m["message"] for m in ours] == ["Duplicate ID “dup”."], ours
    assert _report(ours, tmp_path).startswith("page.html:4: Duplicate ID"), _report(ours, tmp_path)
