"""The server of the local pages that show held text and write labels (``gamut audit serve``, the
workbench's review pages). It listens on 127.0.0.1 and refuses (4xx, with a reason) another
``Host`` (DNS rebinding), a path without the session's random token (``/TOKEN/...``), and a POST
not typed ``application/json`` or from another ``Origin`` (cross-site forms and fetches)."""

from __future__ import annotations

import json
import mimetypes
import secrets
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from scoring.storage import open_regular

MAX_BODY = 4 << 20

FORM_SCRIPT = """<script>
document.addEventListener("submit", async e => {
  e.preventDefault(); const form = e.target, body = {};
  new FormData(form).forEach((v, k) => { body[k] = v; });
  const r = await fetch(form.action, {method: "POST", body: JSON.stringify(body),
                                      headers: {"Content-Type": "application/json"}});
  const m = await r.text(); if (r.ok) location.search = new URLSearchParams({m}); else alert(m);
});</script>"""
"""Posts a page's forms as JSON, then reopens the page with the reply's text as its ``m``."""


@dataclass(frozen=True)
class Reply:
    """One response: its body, content type and status."""

    body: bytes | str
    kind: str = "text/html; charset=utf-8"
    status: int = HTTPStatus.OK


def text(status: int, reason: str) -> Reply:
    """A plain-text reply (a refusal's reason, a 404)."""
    return Reply(reason, "text/plain; charset=utf-8", status)


def image(path: Path | None) -> Reply:
    """The image file at ``path`` (a link to one followed; never a pipe or device), or a 404."""
    kind = mimetypes.guess_type(path.name)[0] if path is not None else None
    try:
        if path is not None and kind is not None:
            with open_regular(path, links=True) as f:
                return Reply(f.read(), kind)
    except OSError:
        pass
    return text(HTTPStatus.NOT_FOUND, "no such image")


Get = Callable[[str, dict[str, str]], Reply]
Post = Callable[[str, Any], Reply]


class LocalServer(ThreadingHTTPServer):
    """The server on 127.0.0.1 (port 0: a free one): ``get(path, query)`` and ``post(path,
    body)`` answer what passes, one at a time, the path taken below the token."""

    def __init__(self, get: Get, post: Post, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.get, self.post, self.lock = get, post, threading.Lock()
        self.token = secrets.token_urlsafe(24)
        self.hosts = {f"{h}:{self.server_address[1]}" for h in ("127.0.0.1", "localhost")}

    @property
    def url(self) -> str:
        """The page's address, token included: the one URL that opens it."""
        return f"http://127.0.0.1:{self.server_address[1]}/{self.token}/"


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, reply: Reply) -> None:
        body = reply.body.encode() if isinstance(reply.body, str) else reply.body
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def _route(self) -> tuple[str, dict[str, str]] | Reply:
        """(path below the token, query), or the refusal of a request from elsewhere."""
        host, url = self.headers.get("Host", ""), urllib.parse.urlsplit(self.path)
        prefix, origin = f"/{self.server.token}/", self.headers.get("Origin")
        if host not in self.server.hosts:
            return text(HTTPStatus.MISDIRECTED_REQUEST, f"refused: Host {host!r} is not this one")
        if not secrets.compare_digest(url.path[: len(prefix)].encode(), prefix.encode()):
            return text(HTTPStatus.FORBIDDEN, "refused: no session token (open the printed URL)")
        if self.command == "POST" and origin not in (None, f"http://{host}"):
            return text(HTTPStatus.FORBIDDEN, f"refused: a post from {origin!r}")
        if self.command == "POST" and self.headers.get_content_type() != "application/json":
            return text(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "refused: send application/json")
        path = "/" + urllib.parse.unquote(url.path[len(prefix) :])
        return path, dict(urllib.parse.parse_qsl(url.query))

    def _answer(self) -> None:
        size = self.headers.get("Content-Length", "0")
        big = not (size.isascii() and size.isdigit()) or int(size) > MAX_BODY
        raw = b"" if big else self.rfile.read(int(size))  # read first: a refusal is not reset
        too_big = text(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"refused: over {MAX_BODY} bytes")
        route = too_big if big else self._route()
        if isinstance(route, Reply):
            return self._send(route)
        try:
            body = json.loads(raw) if self.command == "POST" else None
        except ValueError as exc:
            return self._send(text(HTTPStatus.BAD_REQUEST, f"refused: not JSON ({exc})"))
        with self.server.lock:
            post = self.command == "POST"
            reply = self.server.post(route[0], body) if post else self.server.get(*route)
        self._send(reply)

    do_GET = do_POST = _answer
