"""Evidence through the HTTP search provider (a fake API on 127.0.0.1) and a second release's
changelog (drops, corrections, checks changed by id)."""

from __future__ import annotations

import datetime as dt
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.workbench.helpers import run
from workbench.evidence import HttpPages, HttpSearch, SearchError, audit
from workbench.release import record_correction, release
from workbench.store import Workbench, WorkbenchError


class _Search(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, dict[str, list[str]]]]] = []

    def do_GET(self) -> None:
        if self.path.startswith("/page"):
            body = b"<html><body><p>The red panda</p><p>eats <b>bamboo</b>.</p></body></html>"
            self.send_response(200 if self.path == "/page" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        _Search.seen.append((self.headers.get("Authorization", ""), query))
        if self.headers.get("Authorization") != "Bearer sekret":
            self.send_response(401)
            self.end_headers()
            return
        n = int(query["count"][0])
        if query["q"] == ["deep"]:  # a hostile reply: nesting deeper than any parser's stack
            data = b"[" * 200_000 + b"]" * 200_000
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        body: dict[str, Any] = {
            "results": [
                {"url": f"https://example.org/{i}", "title": f"T{i}", "snippet": f"text {i}"}
                for i in range(n + 3)
            ]
        }
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def search_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/search"
    server.shutdown()
    server.server_close()


def test_http_search_sends_the_key_from_the_environment(
    search_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = HttpSearch(search_url, "GAMUT_TEST_SEARCH_KEY")
    monkeypatch.delenv("GAMUT_TEST_SEARCH_KEY", raising=False)
    with pytest.raises(SearchError, match="set GAMUT_TEST_SEARCH_KEY"):
        provider.search("q1", "what is pad thai", 2)
    monkeypatch.setenv("GAMUT_TEST_SEARCH_KEY", "wrong")
    with pytest.raises(SearchError, match="HTTP 401"):
        provider.search("q1", "what is pad thai", 2)
    monkeypatch.setenv("GAMUT_TEST_SEARCH_KEY", "sekret")
    found = provider.search("q1", "what is pad thai", 2)
    assert [s.url for s in found] == ["https://example.org/0", "https://example.org/1"]
    assert found[0].retrieved == dt.date.today() and found[0].text == "text 0"
    assert _Search.seen[-1][1]["q"] == ["what is pad thai"]


def test_http_search_refuses_a_reply_too_big_or_too_deep(
    search_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAMUT_TEST_SEARCH_KEY", "sekret")
    provider = HttpSearch(search_url, "GAMUT_TEST_SEARCH_KEY")
    with pytest.raises(SearchError, match="is over 4194304 bytes; ask for fewer results"):
        provider.search("q1", "what is pad thai", 100_000)  # ~7 MB of results
    with pytest.raises(SearchError, match="search API failed for q1"):
        provider.search("q1", "deep", 2)


def test_the_audit_reads_source_pages_over_http(search_url: str) -> None:
    base = search_url.removesuffix("/search")
    rubric = {
        "snippets": [
            {"id": "S1", "url": f"{base}/page", "text": "The red panda eats bamboo."},
            {"id": "S2", "url": f"{base}/page", "text": "It eats fish."},
            {"id": "S3", "url": f"{base}/page-gone", "text": "Gone."},
        ],
        "items": [
            {"id": "I1", "cites": ["S1", "S2", "S3"], "members": ["bamboo", "acorns"]},
        ],
    }
    found = audit(rubric, HttpPages(timeout_s=5))
    assert found["snippets"] == {"S1": "verified", "S2": "not_found", "S3": "unreachable"}
    assert found["partial"] == [{"item_id": "I1", "uncovered": 1, "of": 2}]


def test_a_second_release_lists_drops_corrections_and_changed_checks(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert run("build", "demo", "--out", str(out))[0] == 0
    wb = Workbench(out / "workbench")
    record_correction(wb, "plants-0002", "the image shows a sundew, not a flytrap")
    record_correction(wb, "food-0001", "upstream label was wrong", entity="pad thai (Thai)")
    with pytest.raises(WorkbenchError, match="no entered question"):
        record_correction(wb, "nope", "x")
    rubric = wb.read("rubrics/plants-0001.json")
    rubric["items"][0]["text"] = rubric["items"][0]["text"] + " (revised)"
    wb.write("rubrics/plants-0001.json", rubric)
    with pytest.raises(WorkbenchError, match="already released"):
        release(wb, "demo-1.0")
    with pytest.raises(WorkbenchError, match="already holds a release"):
        release(wb, "demo-1.1", out)
    meta = release(wb, "demo-1.1")
    assert meta["previous"] == "demo-1.0" and meta["n_questions"] == 3
    notes = wb.path("releases/demo-1.1/CHANGELOG.md").read_text()
    assert "- plants-0002: the image shows a sundew, not a flytrap" in notes
    assert "- food-0001: upstream label was wrong" in notes
    assert "## Checks changed (1)\n\n- plants-0001/I1\n" in notes
    assert "- plants-0002/I1" in notes.split("## Checks removed")[1]
    assert "(revised)" not in notes
