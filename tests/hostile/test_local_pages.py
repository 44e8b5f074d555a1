"""The local pages (audit, review, revision) over real HTTP on 127.0.0.1: a rebound Host, another
site's Origin, a no-preflight ``text/plain`` post and a missing or wrong token are each refused
with a 4xx and a reason, and nothing is read or written; the page's own requests work."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gamut.audit_serve import make_audit_server, open_session
from gamut.config import load_config
from gamut.local_server import LocalServer
from gamut.project import Project
from scoring.compiler import compile_rubric
from scoring.rubric import MetaRubric
from tests.tables.test_audit import LINES, audited_project
from tests.workbench.helpers import run
from tests.workbench.test_steps import _proposed
from workbench.questions import CANDIDATES, DECISIONS
from workbench.review_page import make_review_server
from workbench.revise_page import make_revise_server
from workbench.store import Workbench

JSON = "application/json"


@dataclass
class Page:
    """A served page: where its held text is read, what it posts, and what a post writes."""

    server: LocalServer
    read: str  # a GET path (below the token) whose reply holds ``held``
    held: str
    post: str
    body: dict[str, Any]
    written: Callable[[], Any]

    def ask(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """One request; ``path`` is below the token unless it starts with ``/``."""
        port = self.server.server_address[1]
        full = path if path.startswith("/") else f"/{self.server.token}/{path}"
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request(method, full, body, {"Host": f"127.0.0.1:{port}", **(headers or {})})
            reply = conn.getresponse()
            return reply.status, reply.read().decode()
        finally:
            conn.close()

    def send(self, headers: dict[str, str] | None = None) -> tuple[int, str]:
        """POST the page's own body as JSON."""
        data = json.dumps(self.body).encode()
        return self.ask("POST", self.post, data, {"Content-Type": JSON, **(headers or {})})


def _audit(root: Path) -> Page:
    project = Project(load_config(audited_project(root / "p", LINES)))
    sample = root / "draw.jsonl"
    sample.write_text(
        '{"submission_id": "beta", "setting": "text_only", "question_id": "food-2"}\n'
    )
    session = open_session(project, "ann-x", sample, False)
    check = session.items[0]["checks"][0]
    body = {"ref": "R1", "check_id": check["check_id"], "verdict": "meets"}  # blind: a ref
    server = make_audit_server(session, 0)
    return Page(server, "api/items", check["text"], "api/label", body, session.own)


def _review(root: Path) -> Page:
    wb = _proposed(root)
    cid, cand = sorted(wb.read(CANDIDATES).items())[0]
    body = {
        "candidate_id": cid,
        "round": str(cand["round"]),
        "role": "review",
        "decision": "accept",
    }
    server = make_review_server(wb, "ann-a", port=0)
    return Page(server, "", cand["question"], "decide", body, lambda: wb.read(DECISIONS, []))


def _revise(root: Path) -> Page:
    assert run("build", "demo", "--out", str(root / "demo"))[0] == 0
    wb = Workbench(root / "demo" / "workbench")
    checks = compile_rubric(MetaRubric.model_validate(wb.read("rubrics/food-0001.json")))
    body = {"text:I2.m5": "eggs"}
    server = make_revise_server(wb, "ann-r", port=0)
    written = lambda: wb.read("revisions.json", [])  # noqa: E731
    return Page(server, "q/food-0001", checks[0].text, "q/food-0001", body, written)


@pytest.fixture(
    scope="module", params=[_audit, _review, _revise], ids=["audit", "review", "revise"]
)
def page(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Page]:
    served = request.param(tmp_path_factory.mktemp(request.param.__name__))
    threading.Thread(target=served.server.serve_forever, daemon=True).start()
    yield served
    served.server.shutdown()
    served.server.server_close()


def _refused(page: Page, reply: tuple[int, str], status: int, reason: str, before: Any) -> None:
    assert reply[0] == status and reason in reply[1], reply
    assert page.held not in reply[1] and page.written() == before


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "127.0.0.1", "[::1]:{port}", ""]
)
def test_a_foreign_host_reads_and_writes_nothing(page: Page, host: str) -> None:
    before, port = page.written(), page.server.server_address[1]
    forged = {"Host": host.format(port=port)}
    _refused(page, page.ask("GET", page.read, b"", forged), 421, "is not this one", before)
    _refused(page, page.send(forged), 421, "is not this one", before)


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}"]
)
def test_another_sites_origin_writes_nothing(page: Page, origin: str) -> None:
    before = page.written()
    forged = origin.format(port=page.server.server_address[1])
    _refused(page, page.send({"Origin": forged}), 403, "refused: a post from", before)


@pytest.mark.parametrize(
    "kind",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""],
)
def test_a_post_that_is_not_json_typed_writes_nothing(page: Page, kind: str) -> None:
    before = page.written()
    _refused(page, page.send({"Content-Type": kind}), 415, "send application/json", before)


def test_without_the_token_nothing_is_read_or_written(page: Page) -> None:
    before, token = page.written(), page.server.token
    wrong = "x" * len(token)
    for path in ("/", f"/{page.read}", f"/{wrong}/{page.read}", f"/{token[:-1]}/{page.read}",
                 f"/{token}", f"/{page.read}?token={token}"):  # fmt: skip
        _refused(page, page.ask("GET", path), 403, "no session token", before)
    for path in (f"/{page.post}", f"/{wrong}/{page.post}"):
        body = json.dumps(page.body).encode()
        reply = page.ask("POST", path, body, {"Content-Type": JSON})
        _refused(page, reply, 403, "no session token", before)


def test_oversized_and_malformed_posts_write_nothing(page: Page) -> None:
    before = page.written()
    for size in (str(64 << 20), "\u00b2", "-1"):
        huge = {"Content-Type": JSON, "Content-Length": size}
        _refused(page, page.ask("POST", page.post, b"{}", huge), 413, "refused: over", before)
    bad = page.ask("POST", page.post, b"{not json", {"Content-Type": JSON})
    _refused(page, bad, 400, "not JSON", before)


def test_the_pages_own_requests_read_and_write(page: Page) -> None:
    assert page.server.server_address[0] == "127.0.0.1"
    assert (
        page.server.url == f"http://127.0.0.1:{page.server.server_address[1]}/{page.server.token}/"
    )
    status, got = page.ask("GET", page.read)
    assert status == 200 and page.held in got
    port = page.server.server_address[1]
    assert page.ask("GET", page.read, b"", {"Host": f"localhost:{port}"})[0] == 200
    before = page.written()
    status, got = page.send(
        {"Origin": f"http://127.0.0.1:{port}", "Content-Type": f"{JSON}; charset=utf-8"}
    )
    assert status == 200 and page.written() != before, got
    # a script-less client (curl) sends no Origin: with the token it is the user's own
    assert page.send()[0] == 200


def test_each_session_has_its_own_token(tmp_path: Path) -> None:
    servers = [make_review_server(Workbench.open(tmp_path / "wb"), "a", port=0) for _ in range(2)]
    try:
        assert servers[0].token != servers[1].token and len(servers[0].token) >= 32
    finally:
        for s in servers:
            s.server_close()


def test_the_command_prints_the_one_url_that_opens_the_page(tmp_path: Path) -> None:
    config = audited_project(tmp_path / "p", LINES)
    sample = tmp_path / "draw.jsonl"
    sample.write_text(
        '{"submission_id": "beta", "setting": "text_only", "question_id": "food-2"}\n'
    )
    args = ["audit", "serve", "--annotator", "ann-x", "--sample", str(sample), "--port", "0"]
    cmd = [sys.executable, "-m", "gamut", *args, "--config", str(config)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = re.findall(r"http://127\.0\.0\.1:\d+/[\w-]{32,}/", proc.stdout.readline())[0]
        with urllib.request.urlopen(url + "api/items", timeout=10) as reply:
            assert reply.status == 200 and '"food-2"' in reply.read().decode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url.rsplit("/", 2)[0] + "/api/items", timeout=10)
        assert refused.value.code == 403
    finally:
        proc.terminate()
        proc.wait(10)
