"""The server of the local pages (``gamut audit serve``, ``build review serve``, ``build revise
serve``): they show held text and write labels, so they answer this machine's own page only.

It listens on 127.0.0.1 and refuses, with a 4xx and a one-line reason, a request whose ``Host``
is not ``127.0.0.1:PORT`` or ``localhost:PORT`` (a rebound DNS name), whose path does not start
with this session's random token (``/TOKEN/...``: the printed URL carries it, and the pages use
relative URLs, so every page, image and API call carries it too), and a POST whose body is not
``application/json`` (a cross-site form or a no-preflight ``text/plain`` fetch) or whose
``Origin`` is another site's.
"""

from __future__ import annotations

import json
import secrets
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 4 << 20

FORM_SCRIPT = """<script>
document.addEventListener("submit", async e => {
  e.preventDefault();
  const form = e.target, body = {};
  new FormData(form).forEach((v, k) => { body[k] = v; });
  const r = await fetch(form.action, {method: "POST", body: JSON.stringify(body),
                                      headers: {"Content-Type": "application/json"}});
  if (!r.ok) { alert(await r.text()); return; }
  location.href = new URL((await r.json()).next, form.action);
});
</script>"""
"""Posts a page's forms as JSON and opens the page the reply names (``{"next": URL}``)."""


@dataclass(frozen=True)
class Reply:
    """One response: its body, content type and status."""

    body: bytes | str
    kind: str = "text/html; charset=utf-8"
    status: int = HTTPStatus.OK


def text(status: int, reason: str) -> Reply:
    """A plain-text reply (a refusal's reason, a 404)."""
    return Reply(reason, "text/plain; charset=utf-8", status)


def redirect(next_url: str) -> Reply:
    """The reply to a form post: the page to open next, relative to the form's URL."""
    return Reply(json.dumps({"next": next_url}), "application/json")


def form_fields(body: Any) -> dict[str, str] | None:
    """A form's fields as :data:`FORM_SCRIPT` posts them (an object of strings), else None."""
    ok = isinstance(body, dict) and all(isinstance(v, str) for v in body.values())
    return body if ok else None


Get = Callable[[str, dict[str, str]], Reply]
Post = Callable[[str, Any], Reply]


class LocalServer(ThreadingHTTPServer):
    """A threaded HTTP server on 127.0.0.1 with a per-session token (port 0 picks a free one):
    ``get(path, query)`` and ``post(path, json_body)`` answer what passes, the path taken below
    the token."""

    daemon_threads = True

    def __init__(self, get: Get, post: Post, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.get, self.post = get, post
        self.token = secrets.token_urlsafe(24)
        bound = self.server_address[1]
        self.hosts = {f"127.0.0.1:{bound}", f"localhost:{bound}"}

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

    def do_GET(self) -> None:
        route = self._route()
        self._send(route if isinstance(route, Reply) else self.server.get(*route))

    def do_POST(self) -> None:
        size = self.headers.get("Content-Length", "")
        big = not size.isdigit() or int(size) > MAX_BODY
        raw = b"" if big else self.rfile.read(int(size))  # read first: a refusal is not reset
        too_big = text(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"refused: over {MAX_BODY} bytes")
        route = too_big if big else self._route()
        if isinstance(route, Reply):
            self._send(route)
            return
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._send(text(HTTPStatus.BAD_REQUEST, f"refused: not JSON ({exc})"))
            return
        self._send(self.server.post(route[0], body))


__all__ = ["FORM_SCRIPT", "LocalServer", "Reply", "form_fields", "redirect", "text"]
