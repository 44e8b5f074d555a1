"""The site builds with MkDocs and with ProperDocs (``[site] builder``), page for page the same.

The demo is judged and scored once; its site is built by each builder from the same score tables
(two configs in one folder, differing in ``builder`` and ``out`` only), each build in its own
``gamut`` process. Both write the same files, byte for byte, but for each page's
``<meta name="generator">``, which names the builder.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.build import site_builder
from scoring.errors import GamutError
from tests.demo_config import demo_config_text

GENERATOR = re.compile(rb'<meta name="generator" content="([^"]*)">')


def _gamut(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "gamut", *args], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_mkdocs_and_properdocs_write_the_same_pages(tmp_path: Path) -> None:
    text = demo_config_text()
    assert text.count('builder = "mkdocs"') == 1 and text.count('out = "site"') == 1
    (tmp_path / "gamut.toml").write_text(text, encoding="utf-8")
    other = text.replace('builder = "mkdocs"', 'builder = "properdocs"')
    (tmp_path / "properdocs.toml").write_text(other.replace('out = "site"', 'out = "site-pd"'))
    _gamut("run", "--config", str(tmp_path / "gamut.toml"))
    _gamut("site", "build", "--config", str(tmp_path / "properdocs.toml"))
    mk, pd = _files(tmp_path / "site"), _files(tmp_path / "site-pd")
    assert sorted(mk) == sorted(pd)
    pages = [name for name in mk if name.endswith(".html")]
    assert len(pages) >= 20
    seen: set[tuple[bytes, bytes]] = set()
    # the build stamp fingerprints the inputs, which differ in the builder and the folder
    assert mk.pop(".build-stamp") != pd.pop(".build-stamp")
    for name in mk:
        a, b = mk[name], pd[name]
        if name in pages:
            (ga,), (gb,) = GENERATOR.findall(a), GENERATOR.findall(b)
            seen.add((ga, gb))
            a, b = GENERATOR.sub(b"", a), GENERATOR.sub(b"", b)
        assert a == b, f"{name} differs between the two builders"
    ((ga, gb),) = seen
    assert ga.startswith(b"mkdocs-1.6.") and b"ProperDocs 1.6." in gb, seen


def test_one_process_builds_with_one_builder() -> None:
    import mkdocs.config  # noqa: F401  (this process has loaded MkDocs, as the tests do)

    with pytest.raises(GamutError, match="loaded MkDocs; build in a new process"):
        site_builder("properdocs")
    assert "properdocs.replacement" not in sys.modules


#: What Zensical's compatibility pages (zensical.org/docs/compatibility/) list as unsupported
#: (``mkdocs/migration.md``, "Unsupported settings"), and of what the site uses, what they list
#: as supported: plugins (``mkdocs/plugins.md``), Markdown extensions and their options
#: (``markdown/python-markdown.md``, ``markdown/python-markdown-extensions.md``); ``offline`` is
#: documented by Zensical's own setup pages (``docs/setup/offline.md``: ``plugins: - offline``).
ZENSICAL_UNSUPPORTED = {"remote_branch", "remote_name", "hooks"}
ZENSICAL_PLUGINS = {"search", "offline", "tags", "blog", "meta", "minify", "glightbox", "macros"}
ZENSICAL_EXTENSIONS: dict[str, set[str]] = {
    "abbr": set(),
    "admonition": set(),
    "attr_list": set(),
    "def_list": set(),
    "footnotes": set(),
    "md_in_html": set(),
    "tables": set(),
    "toc": {"title", "permalink", "permalink_title", "slugify", "toc_depth"},
    "pymdownx.highlight": {
        "pygments_lang_class",
        "auto_title",
        "linenums",
        "linenums_style",
        "anchor_linenums",
        "line_spans",
    },
    "pymdownx.superfences": {"custom_fences"},
    "pymdownx.details": set(),
    "pymdownx.inlinehilite": set(),
    "pymdownx.keys": set(),
    "pymdownx.snippets": set(),
}


def test_mkdocs_yml_keeps_to_what_zensical_reads() -> None:
    import yaml

    cfg = yaml.safe_load((Path(__file__).resolve().parents[2] / "mkdocs.yml").read_text())
    assert not ZENSICAL_UNSUPPORTED & set(cfg), ZENSICAL_UNSUPPORTED & set(cfg)
    plugins = {p if isinstance(p, str) else next(iter(p)) for p in cfg.get("plugins", [])}
    assert plugins <= ZENSICAL_PLUGINS, plugins - ZENSICAL_PLUGINS
    assert cfg["theme"]["name"] == "material"  # Zensical's "classic" variant keeps its look
    for ext in cfg["markdown_extensions"]:
        name, options = (ext, {}) if isinstance(ext, str) else next(iter(ext.items()))
        assert name in ZENSICAL_EXTENSIONS, f"{name}: not on Zensical's list of extensions"
        assert set(options) <= ZENSICAL_EXTENSIONS[name], (name, options)
