"""A small Hugging Face Hub speaking the download and commit protocols, on 127.0.0.1 for tests.

Routes (datasets only): ``GET /api/datasets/{repo}/revision/{rev}``, ``GET
/api/datasets/{repo}/tree/{rev}[/{path}]``, ``HEAD``/``GET /datasets/{repo}/resolve/{rev}/{path}``,
and the two ``huggingface_hub.HfApi.create_commit`` uses: ``POST
/api/datasets/{repo}/preupload/{rev}`` (every file is uploaded inline, as a "regular" file) and
``POST /api/datasets/{repo}/commit/{rev}`` (the NDJSON commit: a header, then ``file`` and
``deletedFile`` lines). A commit needs the token whatever the repo's visibility, and is refused
with 412 when its ``parentCommit`` is not the branch head. Private repos need ``Authorization:
Bearer <token>`` to read (401 otherwise); unknown repos, revisions and files answer 404 with the
Hub's ``X-Error-Code``. Every request is recorded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class FakeRepo:
    """One dataset repo: commits (sha -> files), branch names, and who may read it."""

    commits: dict[str, dict[str, bytes]]
    branches: dict[str, str] = field(default_factory=dict)
    private: bool = True
    #: commits made through the commit endpoint, oldest first: (sha, summary, paths added,
    #: paths deleted)
    log: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)


@dataclass
class Request:
    """One request the fake hub received."""

    method: str
    path: str
    authorization: str | None


@dataclass
class FakeHub:
    """The hub's state: repos by id, the accepted token, and the requests seen."""

    repos: dict[str, FakeRepo]
    token: str
    requests: list[Request] = field(default_factory=list)
    url: str = ""


def commit_sha(files: dict[str, bytes], parent: str = "") -> str:
    """A deterministic 40-hex commit id for a set of files (and the parent commit)."""
    h = hashlib.sha1(parent.encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name])
    return h.hexdigest()


_API = re.compile(r"^/api/datasets/([^/]+/[^/]+)/(revision|tree)/([^/]+)(?:/(.*))?$")
_RESOLVE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")
_WRITE = re.compile(r"^/api/datasets/([^/]+/[^/]+)/(preupload|commit)/([^/]+)$")


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(
            self,
            status: int,
            body: bytes = b"",
            headers: dict[str, str] | None = None,
            head: bool = False,
        ) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _error(self, status: int, code: str, head: bool = False) -> None:
            body = json.dumps({"error": code}).encode()
            self._send(
                status, body, {"X-Error-Code": code, "Content-Type": "application/json"}, head
            )

        def _repo(self, repo_id: str, head: bool) -> FakeRepo | None:
            repo = hub.repos.get(repo_id)
            auth = self.headers.get("Authorization")
            if repo is None:
                self._error(401 if auth is None else 404, "RepoNotFound", head)
                return None
            if repo.private and auth != f"Bearer {hub.token}":
                if auth is None:
                    self._error(401, "RepoNotFound", head)
                else:
                    self._send(401, b'{"error": "Invalid credentials"}', {}, head)
                return None
            return repo

        def _commit(self, repo: FakeRepo, rev: str, head: bool) -> tuple[str, dict[str, bytes]]:
            sha = repo.branches.get(rev, rev)
            if sha not in repo.commits:
                self._error(404, "RevisionNotFound", head)
                return "", {}
            return sha, repo.commits[sha]

        def _serve(self, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(Request(self.command, path, self.headers.get("Authorization")))
            if m := _API.match(path):
                repo_id, kind, rev, sub = m.groups()
                repo = self._repo(repo_id, head)
                if repo is None:
                    return
                sha, files = self._commit(repo, rev, head)
                if not sha:
                    return
                if kind == "revision":
                    body = {
                        "id": repo_id,
                        "sha": sha,
                        "private": repo.private,
                        "siblings": [{"rfilename": n} for n in sorted(files)],
                    }
                else:
                    prefix = f"{sub.strip('/')}/" if sub else ""
                    body = [  # type: ignore[assignment]
                        {
                            "type": "file",
                            "path": n,
                            "size": len(b),
                            "oid": hashlib.sha1(b).hexdigest(),
                        }
                        for n, b in sorted(files.items())
                        if n.startswith(prefix)
                    ]
                self._send(
                    200, json.dumps(body).encode(), {"Content-Type": "application/json"}, head
                )
            elif m := _RESOLVE.match(path):
                repo_id, rev, name = m.groups()
                repo = self._repo(repo_id, head)
                if repo is None:
                    return
                sha, files = self._commit(repo, rev, head)
                if not sha:
                    return
                if name not in files:
                    self._error(404, "EntryNotFound", head)
                    return
                data = files[name]
                headers = {
                    "X-Repo-Commit": sha,
                    "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
                    "Content-Type": "application/octet-stream",
                }
                self._send(200, data, headers, head)
            else:
                self._error(404, "NotFound", head)

        def do_GET(self) -> None:
            self._serve(head=False)

        def do_POST(self) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(Request("POST", path, self.headers.get("Authorization")))
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            m = _WRITE.match(path)
            if m is None:
                self._error(404, "NotFound")
                return
            repo_id, kind, rev = m.groups()
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._error(404, "RepoNotFound")
                return
            if self.headers.get("Authorization") != f"Bearer {hub.token}":
                self._send(401, b'{"error": "Invalid credentials"}')
                return
            head = repo.branches.get(rev)
            if head is None:
                self._error(404, "RevisionNotFound")
                return
            if kind == "preupload":
                files = json.loads(body)["files"]
                out = {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                        for f in files
                    ]
                }
                self._send(200, json.dumps(out).encode(), {"Content-Type": "application/json"})
                return
            self._commit_ndjson(repo_id, repo, rev, head, body)

        def _commit_ndjson(
            self, repo_id: str, repo: FakeRepo, rev: str, head: str, body: bytes
        ) -> None:
            files = dict(repo.commits[head])
            summary, added, deleted = "", [], []
            for line in body.splitlines():
                item = json.loads(line)
                value = item["value"]
                if item["key"] == "header":
                    summary = value.get("summary", "")
                    parent = value.get("parentCommit")
                    if parent is not None and parent != head:
                        self._error(412, "ParentCommitMismatch")
                        return
                elif item["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                    added.append(value["path"])
                elif item["key"] == "deletedFile":
                    files.pop(value["path"], None)
                    deleted.append(value["path"])
                else:  # lfsFile, deletedFolder: not spoken by this hub
                    self._error(400, "UnsupportedOperation")
                    return
            sha = commit_sha(files, head)
            repo.commits[sha] = files
            repo.branches[rev] = sha
            repo.log.append((sha, summary, added, deleted))
            out = {"commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{sha}", "commitOid": sha}
            self._send(200, json.dumps(out).encode(), {"Content-Type": "application/json"})

        def do_HEAD(self) -> None:
            self._serve(head=True)

    return Handler


@contextmanager
def serve_hub(hub: FakeHub) -> Iterator[FakeHub]:
    """Serve ``hub`` on a free port of 127.0.0.1 for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
