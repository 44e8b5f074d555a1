"""The change feed (``feed.xml``, Atom 1.0, RFC 4287): a submission added, a submission's
responses changed, a new benchmark version, a change of judges; newest first, each entry linking
to the page it concerns. The changes come from the application (:mod:`gamut.history` reads them
from the repository's history); a build without them writes a feed with no entries that says
why in its subtitle."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from generator.render import file_id
from generator.spec import Change, ChangeKind, History
from scoring.storage import atomic_write_bytes

ATOM = "http://www.w3.org/2005/Atom"
FEED = "feed.xml"


def _title(change: Change, names: dict[str, str]) -> str:
    name = names.get(change.submission_id or "", change.submission_id or "")
    if change.kind is ChangeKind.SUBMISSION:
        return f"New submission: {name}"
    if change.kind is ChangeKind.RESPONSES:
        return f"Responses updated: {name}"
    if change.kind is ChangeKind.BENCHMARK:
        return f"New benchmark version{': ' + change.detail if change.detail else ''}"
    return "The judges changed"


def _summary(change: Change, names: dict[str, str]) -> str:
    name = names.get(change.submission_id or "", change.submission_id or "")
    if change.kind is ChangeKind.SUBMISSION:
        return f"{name} was added to the leaderboard."
    if change.kind is ChangeKind.RESPONSES:
        return f"The responses of {name} changed; they are judged and scored again."
    if change.kind is ChangeKind.BENCHMARK:
        return "The question set or the rubrics changed; every submission is scored again."
    return "The judges changed; every submission is judged and scored again."


def _href(change: Change, names: dict[str, str], base: str) -> str:
    if change.submission_id is not None and change.submission_id in names:
        return f"{base}submissions/{file_id(change.submission_id)}.html"
    return base or "./"


def feed_xml(
    history: History, names: dict[str, str], *, title: str, url: str | None, updated: str
) -> bytes:
    """The Atom document. ``names`` maps the submissions on the site to their model names (an
    entry about a submission no longer on the site links to the leaderboard); ``updated`` is
    the build's time, the feed's own when it has no entries."""
    base = url.rstrip("/") + "/" if url else ""
    ET.register_namespace("", ATOM)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            el.text = text
        return el

    feed = ET.Element(f"{{{ATOM}}}feed")
    sub(feed, "title", f"{title}: changes")
    if history.unavailable:
        sub(feed, "subtitle", f"No changes to list: {history.unavailable}.")
    sub(feed, "id", f"{base}{FEED}" if base else f"urn:gamut:feed:{file_id(title.lower())}")
    sub(feed, "updated", history.changes[0].when if history.changes else updated)
    sub(sub(feed, "author"), "name", f"{title} maintainers")
    if base:
        sub(feed, "link", rel="self", href=f"{base}{FEED}", type="application/atom+xml")
    sub(feed, "link", rel="alternate", href=base or "./", type="text/html")
    for c in history.changes:
        entry = sub(feed, "entry")
        sub(entry, "id", f"urn:gamut:change:{c.commit}:{c.kind.value}:{c.submission_id or ''}")
        sub(entry, "title", _title(c, names))
        sub(entry, "updated", c.when)
        sub(entry, "link", rel="alternate", href=_href(c, names, base), type="text/html")
        sub(entry, "summary", _summary(c, names))
    doc: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return doc + b"\n"


def write_feed(
    docs: Path,
    history: History,
    names: dict[str, str],
    *,
    title: str,
    url: str | None,
    updated: str,
) -> str:
    """Write ``feed.xml`` at the site's root; returns its path from the root."""
    atomic_write_bytes(docs / FEED, feed_xml(history, names, title=title, url=url, updated=updated))
    return FEED
