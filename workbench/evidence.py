"""``gamut-workbench build evidence``: short web snippets per question from a local snippets file
or an HTTP search API, each with its source URL and retrieval date; and the audit that
re-verifies cited snippets against their source pages. Snippets are held text.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from scoring.errors import GamutError, ProblemsError
from scoring.jsonl import read_jsonl, validated
from scoring.rubric import NonEmpty
from workbench.questions import entered_questions
from workbench.store import Checkpoint, Workbench

EVIDENCE = "evidence.json"


class FoundSnippet(BaseModel):
    """One snippet: where it came from, when, and its short text."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    url: NonEmpty
    title: NonEmpty
    text: NonEmpty
    retrieved: dt.date


class SearchError(GamutError):
    """A search provider failed; the message says what to do."""


class SearchProvider(Protocol):
    """Finds snippets for a question (the text-only form is the query)."""

    def search(self, question_id: str, query: str, limit: int) -> list[FoundSnippet]:
        """At most ``limit`` snippets for ``query``."""


class _SnippetLine(FoundSnippet):
    question_id: NonEmpty


class SnippetsFile:
    """Snippets from a JSON Lines file: ``{"question_id", "url", "title", "text", "retrieved"}``."""

    def __init__(self, path: Path) -> None:
        fix = "give question_id, url, title, text, retrieved (YYYY-MM-DD)"
        data = read_jsonl(path, str(path), "each line: a snippet object")
        problems = list(data.problems)
        self.by_question: dict[str, list[FoundSnippet]] = defaultdict(list)
        for _, s in validated(data.lines, _SnippetLine.model_validate, str(path), fix, problems):
            self.by_question[s.question_id].append(s)
        if problems:
            raise ProblemsError(problems, f"invalid snippets file {path}")

    def search(self, question_id: str, query: str, limit: int) -> list[FoundSnippet]:
        """The file's snippets for ``question_id``."""
        return self.by_question.get(question_id, [])[:limit]


#: a search reply is a few results; more is refused, not read into memory
MAX_SEARCH_REPLY_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class HttpSearch:
    """A search API: ``GET <url>?q=QUERY&count=N`` with ``Authorization: Bearer <key>``,
    answering ``{"results": [{"url", "title", "snippet"}]}``."""

    url: str
    key_env: str
    timeout_s: float = 30.0

    def search(self, question_id: str, query: str, limit: int) -> list[FoundSnippet]:
        """The API's results for ``query``, retrieved today."""
        key = os.environ.get(self.key_env)
        if not key:
            raise SearchError(f"the search API key is not set: set {self.key_env}")
        qs = urllib.parse.urlencode({"q": query, "count": limit})
        req = urllib.request.Request(f"{self.url}?{qs}", headers={"Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read(MAX_SEARCH_REPLY_BYTES + 1)
            if len(raw) > MAX_SEARCH_REPLY_BYTES:
                raise SearchError(
                    f"search API reply for {question_id} is over {MAX_SEARCH_REPLY_BYTES} bytes; "
                    "ask for fewer results (a smaller limit)"
                )
            body: Any = json.loads(raw)
        except urllib.error.HTTPError as exc:
            raise SearchError(
                f"search API answered HTTP {exc.code} for {question_id} "
                "(check the key and the URL, then run the step again)"
            ) from None
        except (urllib.error.URLError, TimeoutError, ValueError, RecursionError) as exc:
            raise SearchError(f"search API failed for {question_id}: {exc}; run again") from None
        today = dt.date.today()
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise SearchError(f"search API reply for {question_id} has no results list")
        out = []
        for r in results[:limit]:
            try:
                out.append(
                    FoundSnippet(url=r["url"], title=r["title"], text=r["snippet"], retrieved=today)
                )
            except (TypeError, KeyError, ValidationError):
                raise SearchError(
                    f"search API reply for {question_id}: a result lacks url, title or snippet"
                ) from None
        return out


def gather(wb: Workbench, provider: SearchProvider, limit: int = 8) -> int:
    """Snippets for every entered question that has none yet; the number of questions done."""
    evidence: dict[str, list[dict[str, Any]]] = wb.read(EVIDENCE, {})
    done = 0
    cp = Checkpoint(lambda: wb.write(EVIDENCE, evidence))
    for q in entered_questions(wb):
        qid = q["question_id"]
        if qid in evidence:
            continue
        found = provider.search(qid, q["text_only_question"], limit)
        evidence[qid] = [
            {"id": f"S{i}", **s.model_dump(mode="json", include=set(FoundSnippet.model_fields))}
            for i, s in enumerate(found, 1)
        ]
        done += 1
        cp.touch()
    cp.flush()
    return done


class SourcePages(Protocol):
    """The text of a snippet's source page, to re-verify the snippet against it."""

    def page_text(self, url: str) -> str | None:
        """The page's text, or None when it cannot be had."""


class _Page(BaseModel):
    url: str
    text: str


class SavedPages:
    """Saved copies of source pages: a JSON Lines file of ``{"url", "text"}`` (offline, tests)."""

    def __init__(self, path: Path) -> None:
        fix = 'each line: {"url": ..., "text": ...}'
        data = read_jsonl(path, str(path), fix)
        problems = list(data.problems)
        pages = validated(data.lines, _Page.model_validate, str(path), fix, problems)
        self.pages = {p.url: p.text for _, p in pages}
        if problems:
            raise ProblemsError(problems, f"invalid pages file {path}")

    def page_text(self, url: str) -> str | None:
        """The saved text of ``url``."""
        return self.pages.get(url)


@dataclass(frozen=True)
class HttpPages:
    """Source pages fetched over HTTP (their markup dropped)."""

    timeout_s: float = 30.0

    def page_text(self, url: str) -> str | None:
        """The page's text, or None when it is unreachable."""
        from html.parser import HTMLParser

        try:
            with urllib.request.urlopen(url, timeout=self.timeout_s) as resp:
                raw = resp.read(5_000_000).decode("utf-8", "replace")
        except (urllib.error.URLError, TimeoutError, ValueError):
            return None
        parts: list[str] = []

        class _Text(HTMLParser):
            def handle_data(self, data: str) -> None:
                parts.append(data)

        _Text().feed(raw)
        return " ".join(parts)


def _norm(text: str) -> str:
    # words only: markup dropped from a page leaves spaces around punctuation and inline tags
    return " ".join(re.findall(r"\w+", text.casefold()))


def audit(rubric: dict[str, Any], pages: SourcePages) -> dict[str, Any]:
    """Re-verify every cited snippet against its source, and flag list and process items whose
    members or steps their cited snippets cover only in part (by id: no text)."""
    snippets = {s["id"]: s for s in rubric["snippets"]}
    cited = {c for i in rubric["items"] for c in i.get("cites", [])}
    found: dict[str, str] = {}
    for sid in sorted(cited):
        page = pages.page_text(snippets[sid]["url"])
        if page is None:
            found[sid] = "unreachable"
        else:
            found[sid] = "verified" if _norm(snippets[sid]["text"]) in _norm(page) else "not_found"
    partial = []
    for item in rubric["items"]:
        parts = item.get("members") or [s["text"] for s in item.get("steps", [])]
        if not parts:
            continue
        text = _norm(" ".join(snippets[c]["text"] for c in item.get("cites", [])))
        missing = sum(1 for p in parts if _norm(p) not in text)
        if missing:
            partial.append({"item_id": item["id"], "uncovered": missing, "of": len(parts)})
    return {"snippets": found, "partial": partial}
