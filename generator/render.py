"""Display helpers: table cells that keep the value apart from its display, number formats, safe
links and the Jinja environment. Templates format; they compute nothing."""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup

from scoring.numbers import MISSING, f1, f2, integer, number, pct, signed, usd

#: Each setting's name on the site, in the order the site shows them.
SETTING_LABELS = {"multimodal": "Multimodal", "text_only": "Text-only"}


def setting_label(setting: str) -> str:
    """Human name of a setting."""
    return SETTING_LABELS.get(setting, setting)


def yes_no(value: Any) -> str:
    """A flag as yes / no."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    try:
        return "yes" if bool(value) else "no"
    except TypeError:  # pandas' NA has no truth value
        return MISSING


def safe_url(url: Any) -> str | None:
    """The URL if it is an absolute http(s) link without control characters, else None."""
    if not isinstance(url, str):
        return None
    text: str = url.strip()
    if not text or any(ord(ch) < 32 or ch in "<>\"'` " for ch in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return text


def link(url: Any, text: Any = None) -> Markup:
    """An escaped anchor for an http(s) URL; anything else becomes inert text."""
    label = url if text is None else text
    ok = safe_url(url)
    if ok is None:
        return Markup("<span>{}</span>").format("" if label is None else str(label))
    return Markup('<a href="{}" rel="nofollow noopener">{}</a>').format(ok, str(label))


def chart_text(value: Any) -> str:
    """Text for a plotly label: plotly reads a subset of HTML in labels, so escape it."""
    return html.escape(str(value), quote=True)


def human(value: Any) -> str:
    """A data label for people: ``consumer_products`` -> ``Consumer products``."""
    text = re.sub(r"[_\s]+", " ", str(value)).strip()
    return text[:1].upper() + text[1:] if text else str(value)


def excerpt(text: Any, limit: int = 700) -> str:
    """The start of a long text, cut at a word boundary with an ellipsis."""
    s = "" if text is None else str(text)
    if len(s) <= limit:
        return s
    cut = s[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def slug(value: str) -> str:
    """A file-name-safe slug of a data value (domain names are data, never hard-coded)."""
    s = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    return s or "x"


def file_id(value: str) -> str:
    """A stable file name for a submission id (ids are validated; anything else is hashed)."""
    if re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", value):
        return value
    return f"{slug(value)}-{hashlib.sha1(value.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class Column:
    """A table column. ``fmt`` names how the template shows the cell's value; ``src`` names the
    record column :func:`rows` reads (default: ``key``)."""

    key: str
    label: str
    fmt: str = "text"
    title: str = ""
    src: str = ""

    @property
    def numeric(self) -> bool:
        """Whether the column sorts and aligns as numbers."""
        return self.fmt not in ("text", "stamp")

    def cell(self, r: Mapping[Any, Any]) -> Cell:
        """The cell of record ``r``: its ``src`` value, with ``_lo`` and ``_hi`` for an interval."""
        src = self.src or self.key
        if self.fmt == "rank" or self.fmt.endswith("ci"):
            return Cell(r.get(src), r.get(f"{src}_lo"), r.get(f"{src}_hi"))
        return Cell(r.get(src))


@dataclass(frozen=True)
class Cell:
    """A value with optional interval and link; the template formats it."""

    value: Any
    lo: Any = None
    hi: Any = None
    href: str | None = None
    extra: Any = None

    @property
    def sort_key(self) -> str:
        """What the browser sorts on: the raw number, or the text."""
        f = number(self.value)
        if f is not None:
            return repr(f)
        if isinstance(self.value, bool):
            return "1" if self.value else "0"
        missing = self.value is None or (isinstance(self.value, float) and math.isnan(self.value))
        return "" if missing else str(self.value)


@dataclass
class Row:
    """One table row: cells by column key, plus ``data-`` attributes for the filters."""

    cells: dict[str, Cell]
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Table:
    """A sortable HTML table (rendered by ``_table.html``)."""

    columns: list[Column]
    rows: list[Row]
    caption: str = ""
    table_id: str = ""
    sortable: bool = True


def table(
    cols: list[Column],
    records: Iterable[Mapping[Any, Any]],
    special: Callable[[Mapping[Any, Any]], dict[str, Cell]] = lambda _r: {},
    caption: str = "",
) -> Table:
    """A table of one row per record, each cell by :meth:`Column.cell` unless ``special``
    gives it."""
    return Table(
        cols, [Row({c.key: c.cell(r) for c in cols} | special(r)) for r in records], caption
    )


#: The number formats a table column or a template may name.
FORMATS = dict(f1=f1, f2=f2, signed=signed, pct=pct, integer=integer, usd=usd, yes_no=yes_no)


def fmt(name: str, value: Any) -> str:
    """Format ``value`` with the named number format (used by ``_table.html``)."""
    return FORMATS[name](value)


def environment() -> jinja2.Environment:
    """The Jinja environment of the page templates, with HTML autoescaping on."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("generator", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    # compact JSON for a ``data-`` attribute (Jinja escapes it on output)
    json_attr = partial(json.dumps, separators=(",", ":"), allow_nan=False)
    env.filters.update(FORMATS, link=link, json_attr=json_attr)
    env.globals["fmt"] = fmt
    return env
