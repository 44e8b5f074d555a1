"""A small Hugging Face Hub speaking the download and commit protocols, on 127.0.0.1 for tests.

Routes (datasets only): ``GET /api/datasets/{repo}/revision/{rev}``, ``GET
/api/datasets/{repo}/tree/{rev}[/{path}]``, ``HEAD``/``GET /datasets/{repo}/resolve/{rev}/{path}``,
``POST /api/repos/create`` (``HfApi.create_repo``: a new dataset, or 409 when it exists), ``POST
/api/validate-yaml`` (a card's metadata, accepted as it is), and the
two ``huggingface_hub.HfApi.create_commit`` uses: ``POST
/api/datasets/{repo}/preupload/{rev}`` (every file is uploaded inline, as a "regular" file) and
``POST /api/datasets/{repo}/commit/{rev}`` (the NDJSON commit: a header, then ``file`` and
``deletedFile`` lines; its additions are applied, then its deletions). A commit needs the token
whatever the repo's visibility, and is refused with 412 when its ``parentCommit`` is not the
branch head; ``FakeHub.before_commit`` can land another commit just before a commit request is
answered, as a concurrent push would, and ``FakeHub.on_request`` sees every request before it is
answered (a test kills its client there). Private repos need ``Authorization: Bearer <token>`` to
read (401 otherwise); unknown repos, revisions and files answer 404 with the Hub's
``X-Error-Code``. Every request is recorded.

The tree lists each file's git blob id, and for files stored with LFS (images) its sha256, as the
Hub does; downloads honour ``Range``. Faults on demand: a download cut after some bytes, an outage
of a file after that cut, bytes that differ from the listed hashes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
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
    lfs_suffixes: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".webp")
    #: commits made through the commit endpoint, oldest first: (sha, summary, paths added,
    #: paths deleted)
    log: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)

    def land(
        self,
        rev: str,
        added: dict[str, bytes],
        deleted: list[str] | tuple[str, ...] = (),
        summary: str = "",
    ) -> str:
        """Commit ``added`` (and drop ``deleted``) on top of branch ``rev``; the new head."""
        head = self.branches[rev]
        files = {**self.commits[head], **added}
        for path in deleted:
            files.pop(path, None)
        sha = commit_sha(files, head)
        self.commits[sha] = files
        self.branches[rev] = sha
        self.log.append((sha, summary, list(added), list(deleted)))
        return sha


@dataclass
class Request:
    """One request the fake hub received."""

    method: str
    path: str
    authorization: str | None
    range: str | None = None


@dataclass
class FakeHub:
    """The hub's state: repos by id, the accepted token, and the requests seen."""

    repos: dict[str, FakeRepo]
    token: str
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    #: file path -> bytes sent before the connection drops, on the next GET of that file (once).
    cut: dict[str, int] = field(default_factory=dict)
    #: after a cut, the file answers 503 until this set is cleared.
    outage_after_cut: bool = False
    unavailable: set[str] = field(default_factory=set)
    #: file path -> the bytes served instead of the real ones (hashes still list the real ones).
    corrupt: dict[str, bytes] = field(default_factory=dict)
    #: called with (repo id, repo) when a commit request arrives, before its ``parentCommit`` is
    #: checked: a hook that lands a commit here makes the request's parent stale (412).
    before_commit: Callable[[str, FakeRepo], None] | None = None
    #: called with each request once it is recorded, before it is answered (in the request's
    #: thread): a hook that kills the client there leaves the request answered to nobody.
    on_request: Callable[[Request], None] | None = None

    def seen(self, request: Request) -> None:
        """Record ``request`` and hand it to :attr:`on_request`."""
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of ``data``: what the Hub lists as a file's ``oid``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


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

        def _cut(self, sent: bytes, length: int, headers: dict[str, str], status: int) -> None:
            """Promise ``length`` bytes, send ``sent``, then drop the connection."""
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(length))
            self.end_headers()
            self.wfile.write(sent)
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

        def _serve(self, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.seen(
                Request(
                    self.command,
                    path,
                    self.headers.get("Authorization"),
                    self.headers.get("Range"),
                )
            )
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
                            "oid": git_blob_sha1(b),
                            **(
                                {
                                    "lfs": {
                                        "oid": hashlib.sha256(b).hexdigest(),
                                        "size": len(b),
                                        "pointerSize": 134,
                                    }
                                }
                                if n.lower().endswith(repo.lfs_suffixes)
                                else {}
                            ),
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
                if name in hub.unavailable:
                    self._error(503, "ServiceUnavailable", head)
                    return
                data = hub.corrupt.get(name, files[name])
                headers = {
                    "X-Repo-Commit": sha,
                    "ETag": f'"{git_blob_sha1(files[name])}"',
                    "Content-Type": "application/octet-stream",
                    "Accept-Ranges": "bytes",
                }
                status = 200
                if m := re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or ""):
                    start = min(int(m[1]), len(data))
                    headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                    data, status = data[start:], 206
                if not head and name in hub.cut:
                    self._cut(data[: hub.cut.pop(name)], len(data), headers, status)
                    if hub.outage_after_cut:
                        hub.unavailable.add(name)
                    return
                self._send(status, data, headers, head)
            else:
                self._error(404, "NotFound", head)

        def do_GET(self) -> None:
            self._serve(head=False)

        def _create(self, req: dict[str, object]) -> None:
            """``HfApi.create_repo``: 409 when the dataset exists (``exist_ok`` reads it so)."""
            if self.headers.get("Authorization") != f"Bearer {hub.token}":
                self._send(401, b'{"error": "Invalid credentials"}')
                return
            repo_id = f"{req.get('organization')}/{req.get('name')}"
            if req.get("type") != "dataset":
                self._error(400, "BadRequest")
                return
            status = 409 if repo_id in hub.repos else 200
            if status == 200:
                sha = commit_sha({})
                hub.repos[repo_id] = FakeRepo({sha: {}}, {"main": sha}, bool(req.get("private")))
            body = {"url": f"{hub.url}/datasets/{repo_id}"}
            if status == 409:
                body["error"] = "You already created this dataset repo"
            self._send(status, json.dumps(body).encode(), {"Content-Type": "application/json"})

        def do_POST(self) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.seen(Request("POST", path, self.headers.get("Authorization")))
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if path == "/api/repos/create":
                self._create(json.loads(body))
                return
            if path == "/api/validate-yaml":  # a dataset card's metadata: accepted as it is
                self._send(200, b"{}", {"Content-Type": "application/json"})
                return
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
            if hub.before_commit is not None:
                hub.before_commit(repo_id, repo)
                head = repo.branches[rev]
            self._commit_ndjson(repo_id, repo, rev, head, body)

        def _commit_ndjson(
            self, repo_id: str, repo: FakeRepo, rev: str, head: str, body: bytes
        ) -> None:
            summary, added, deleted = "", {}, []
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
                    added[value["path"]] = base64.b64decode(value["content"])
                elif item["key"] == "deletedFile":
                    deleted.append(value["path"])
                else:  # lfsFile, deletedFolder: not spoken by this hub
                    self._error(400, "UnsupportedOperation")
                    return
            sha = repo.land(rev, added, deleted, summary)
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
