"""A small GitHub REST API on 127.0.0.1 for tests: one repository's pull requests and runs.

Routes (``/repos/{owner}/{name}/...``): ``pulls?state=open`` (paginated, 100 a page unless
``page_size`` says less, with GitHub's ``Link: <...>; rel="next"`` header), ``pulls/{n}/files``,
``compare/{base}...{sha}`` (the files a commit changes from the base branch),
``actions/workflows/{file}/runs?head_sha=`` (``{"total_count", "workflow_runs"}``) and
``actions/runs/{id}/approvals``; runs are filtered by ``head_sha``, ``event``, ``branch`` and
``created=>=`` as GitHub does (shapes of its REST API version 2022-11-28). Requests need
``Authorization: Bearer <token>`` (401 otherwise);
``fail_with`` answers every request with that status. ``ignore_sha_filter`` returns every run of
the workflow whatever ``head_sha`` asks, as a careless or changed API could. Requests are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class FakeGitHub:
    """The repository's state as the API tells it."""

    repo: str = "owner/repo"
    token: str = "ghs_test_token"
    #: number -> (head sha, changed file names)
    pulls: dict[int, tuple[str, list[str]]] = field(default_factory=dict)
    #: number -> when it was opened (default: before any run)
    opened: dict[int, str] = field(default_factory=dict)
    #: commit -> the files it changes from the base branch (default: its pull request's files)
    commits: dict[str, list[str]] = field(default_factory=dict)
    #: workflow file -> runs (each a dict as GitHub lists it: id, head_sha, event, ...)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: run id -> approvals (each a dict as GitHub lists it: state, environments, user)
    approvals: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    page_size: int = 100
    fail_with: int | None = None
    ignore_sha_filter: bool = False
    requests: list[str] = field(default_factory=list)
    url: str = ""

    #: The default branch's head: what a run started by ``workflow_run`` has as its head_sha.
    main_sha: str = "0" * 40
    clock: int = 0

    def _now(self) -> str:
        self.clock += 1
        minutes, seconds = divmod(self.clock, 60)
        return f"2026-12-01T{minutes // 60:02d}:{minutes % 60:02d}:{seconds:02d}Z"

    def add_run(
        self,
        run_id: int,
        pr_sha: str,
        approved_for: list[str] | None = None,
        *,
        validated: bool = True,
        title: str | None = None,
        pr: int | None = None,
        **extra: Any,
    ) -> None:
        """The validation run of ``pr_sha`` (event pull_request, on pull request ``pr``'s
        branch), then the score-submission.yml run it started, as GitHub lists them: event
        workflow_run, the default branch's head_sha (``extra`` may say otherwise), titled by the
        workflow's ``run-name`` (``title``). ``approved_for`` lists the Environments a
        maintainer approved it for (None: none)."""
        if validated:
            repo, branch = self.head_of(pr or 0)
            self.runs.setdefault("validate-submission.yml", []).append(
                {"id": run_id + 10_000, "head_sha": pr_sha, "event": "pull_request",
                 "created_at": self._now(), "display_title": "Add a submission",
                 "head_branch": branch, "head_repository": {"full_name": repo}}
            )  # fmt: skip
        run = {
            "id": run_id,
            "head_sha": self.main_sha,
            "event": "workflow_run",
            "created_at": self._now(),
            "display_title": f"Score submission {pr_sha}" if title is None else title,
            **extra,
        }
        self.runs.setdefault("score-submission.yml", []).append(run)
        self.approvals[run_id] = (
            [
                {
                    "state": "approved",
                    "environments": [{"id": i, "name": n} for i, n in enumerate(approved_for)],
                    "user": {"login": "maintainer"},
                    "comment": "",
                }
            ]
            if approved_for is not None
            else []
        )

    @staticmethod
    def head_of(number: int) -> tuple[str, str]:
        """(fork, branch) of pull request ``number``: every fork names its branch ``patch``."""
        return f"user{number}/repo", "patch"

    def _pull_json(self, number: int, sha: str) -> dict[str, Any]:
        repo, branch = self.head_of(number)
        return {
            "number": number,
            "created_at": self.opened.get(number, "2026-11-01T00:00:00Z"),
            "head": {"sha": sha, "ref": branch, "repo": {"full_name": repo}},
            "base": {"ref": "main", "sha": self.main_sha},
        }

    def _compare(self, spec: str) -> tuple[int, Any, None]:
        base, _, sha = spec.partition("...")
        heads = {s: files for s, files in self.pulls.values()}
        files = self.commits.get(sha, heads.get(sha))
        if base != "main" or files is None:
            return 404, {"message": "Not Found"}, None
        return 200, {"status": "ahead", "files": [{"filename": f} for f in files]}, None

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, str | None]:
        prefix = f"/repos/{self.repo}/"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}, None
        parts = path[len(prefix) :].split("/")
        page = int(query.get("page", ["1"])[0])
        if parts == ["pulls"] and query.get("state") == ["open"]:
            items = [self._pull_json(n, sha) for n, (sha, _) in
                     sorted(self.pulls.items(), reverse=True)]  # fmt: skip
            return self._page(path, query, items, page)
        if len(parts) == 2 and parts[0] == "compare":
            return self._compare(parts[1])
        if len(parts) == 3 and parts[0] == "pulls" and parts[2] == "files":
            pull = self.pulls.get(int(parts[1]))
            if pull is None:
                return 404, {"message": "Not Found"}, None
            return self._page(path, query, [{"filename": f} for f in pull[1]], page)
        if len(parts) == 4 and parts[:2] == ["actions", "workflows"] and parts[3] == "runs":
            runs = self.runs.get(parts[2], [])
            sha = query.get("head_sha", [None])[0]
            if sha is not None and not self.ignore_sha_filter:
                runs = [r for r in runs if r["head_sha"] == sha]
            if "event" in query:
                runs = [r for r in runs if r["event"] == query["event"][0]]
            if "branch" in query:
                runs = [r for r in runs if r.get("head_branch") == query["branch"][0]]
            since = query.get("created", [""])[0]
            if since:
                assert since.startswith(">="), since
                runs = [r for r in runs if r["created_at"] >= since[2:]]
            runs = sorted(runs, key=lambda r: r["created_at"], reverse=True)  # newest first
            return 200, {"total_count": len(runs), "workflow_runs": runs}, None
        if len(parts) == 4 and parts[:2] == ["actions", "runs"] and parts[3] == "approvals":
            found = self.approvals.get(int(parts[2]))
            return (404, {"message": "Not Found"}, None) if found is None else (200, found, None)
        return 404, {"message": "Not Found"}, None

    def _page(
        self, path: str, query: dict[str, list[str]], items: list[Any], page: int
    ) -> tuple[int, Any, str | None]:
        size = min(self.page_size, int(query.get("per_page", ["30"])[0]))
        chunk = items[(page - 1) * size : page * size]
        link = None
        if page * size < len(items):
            rest = "&".join(f"{k}={v[0]}" for k, v in query.items() if k != "page")
            link = f'<{self.url}{path}?{rest}&page={page + 1}>; rel="next"'
        return 200, chunk, link


def _handler(gh: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            gh.requests.append(self.path)
            parts = urlsplit(self.path)
            if gh.fail_with is not None:
                status, body, link = gh.fail_with, {"message": "failure"}, None
            elif self.headers.get("Authorization") != f"Bearer {gh.token}":
                status, body, link = 401, {"message": "Bad credentials"}, None
            else:
                status, body, link = gh.answer(parts.path, parse_qs(parts.query))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if link:
                self.send_header("Link", link)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def serve_github(gh: FakeGitHub) -> Iterator[FakeGitHub]:
    """Serve ``gh`` on a free port of 127.0.0.1 for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(gh))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    gh.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield gh
    finally:
        server.shutdown()
        server.server_close()
