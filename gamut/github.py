"""What the pull-request workflows ask GitHub's REST API: approvals and open pull requests.

Only the base repository's workflows call this, with their own read-only token; every answer is
checked, never trusted for more than it says.

- :func:`approved_score_run`: the collector (``collect-batches.yml``) judges nothing on its own. It
  takes a pull request only when a run of ``score-submission.yml`` for the PR's *current* head
  commit was approved by a maintainer for the ``submission-scoring`` Environment (the approval
  that every scoring run needs): ``GET .../actions/workflows/score-submission.yml/runs?head_sha=``
  (and, since a run started by ``workflow_run`` carries the default branch's sha, the runs
  titled with that head commit since its validation), then ``GET
  .../actions/runs/{id}/approvals``.
- :func:`claimed_by`: a submission id belongs to the open pull request that changed it first
  (the lowest number); another pull request with the same id is refused, so that two pull
  requests never share one folder.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from scoring.errors import GamutError

SCORE_WORKFLOW = "score-submission.yml"
SCORE_ENVIRONMENT = "submission-scoring"
VALIDATE_WORKFLOW = "validate-submission.yml"
#: ``score-submission.yml``'s ``run-name``: a run started by ``workflow_run`` has the default
#: branch's commit as its ``head_sha``, so the validated head commit is named in its title.
SCORE_RUN_NAME = "Score submission {sha}"
DEFAULT_API = "https://api.github.com"
#: Pages read of one listing (100 items each) before giving up: a bound, not a expected size.
MAX_PAGES = 30
MAX_BODY = 20 * 1024 * 1024
TIMEOUT_S = 30.0
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class GitHubError(GamutError):
    """GitHub's API could not be asked, or answered something unexpected."""


@dataclass(frozen=True)
class Approval:
    """A maintainer's approval of a scoring run."""

    run_id: int
    approver: str

    def as_outputs(self) -> str:
        """``key=value`` lines for ``$GITHUB_OUTPUT`` (and the workflow's shell)."""
        return f"approved=true\nrun_id={self.run_id}\napprover={self.approver}\n"


class GitHub:
    """A tiny read-only client of one repository's REST API.

    Args:
        repo: ``owner/name``.
        token: the bearer token (the workflow's ``github.token``).
        api_url: the API root (``$GITHUB_API_URL`` on a runner).
    """

    def __init__(self, repo: str, token: str, api_url: str = DEFAULT_API) -> None:
        if not _REPO.match(repo):
            raise GitHubError(f"{repo!r} is not an owner/name repository")
        if not api_url.startswith(("https://", "http://")):
            raise GitHubError(f"{api_url!r} is not an http(s) API address")
        self.repo = repo
        self.token = token
        self.api_url = api_url.rstrip("/")

    @classmethod
    def from_env(cls, repo: str | None = None) -> GitHub:
        """The client a workflow step has: ``$GITHUB_REPOSITORY``, ``$GH_TOKEN`` (else
        ``$GITHUB_TOKEN``) and ``$GITHUB_API_URL``.

        Raises:
            GitHubError: no repository or no token.
        """
        repo = repo or os.environ.get("GITHUB_REPOSITORY", "")
        token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""
        if not repo:
            raise GitHubError("no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY")
        if not token:
            raise GitHubError("no token: set GH_TOKEN (in a workflow: ${{ github.token }})")
        return cls(repo, token, os.environ.get("GITHUB_API_URL") or DEFAULT_API)

    def _get(self, url: str) -> tuple[Any, str | None]:
        req = urllib.request.Request(
            url,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "gamut-leaderboard",
            },
        )
        shown = url.split("?", 1)[0]
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                body = resp.read(MAX_BODY + 1)
                link = resp.headers.get("Link")
        except urllib.error.HTTPError as exc:
            raise GitHubError(
                f"GitHub answered HTTP {exc.code} to GET {shown}; check the job's permissions "
                "(actions: read, pull-requests: read) and the token"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise GitHubError(f"cannot reach GitHub at {shown}: {exc}; retry the run") from None
        if len(body) > MAX_BODY:
            raise GitHubError(f"GitHub's answer to GET {shown} exceeds {MAX_BODY} bytes")
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise GitHubError(f"GitHub's answer to GET {shown} is not JSON") from None
        return data, link

    def get(self, path: str, **params: str | int) -> Any:
        """The JSON answer to ``GET /repos/{repo}/{path}``."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return self._get(f"{self.api_url}/repos/{self.repo}/{path}{query}")[0]

    def pages(self, path: str, key: str | None = None, **params: str | int) -> Iterator[Any]:
        """Every item of a paginated listing (``key`` names the list in an object answer)."""
        query = urllib.parse.urlencode({"per_page": 100, **params})
        url: str | None = f"{self.api_url}/repos/{self.repo}/{path}?{query}"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            data, link = self._get(url)
            items = data.get(key) if key is not None and isinstance(data, dict) else data
            if not isinstance(items, list):
                raise GitHubError(f"GitHub's answer to GET {path} is not a listing")
            yield from items
            found = _NEXT.search(link or "")
            url = found[1] if found and found[1].startswith(self.api_url + "/") else None
        raise GitHubError(f"GET {path} has more than {MAX_PAGES} pages; narrow the query")


def _approval(run_id: int, entries: Any) -> Approval | None:
    if not isinstance(entries, list):
        raise GitHubError(f"the approvals of run {run_id} are not a list")
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("state") != "approved":
            continue
        envs = entry.get("environments")
        names = (
            {e.get("name") for e in envs if isinstance(e, dict)} if isinstance(envs, list) else ()
        )
        if SCORE_ENVIRONMENT in names:
            user = entry.get("user")
            login = user.get("login") if isinstance(user, dict) else None
            return Approval(run_id, str(login or "?"))
    return None


def score_run_title(head_sha: str) -> str:
    """The title (``display_title``) of the scoring run of ``head_sha``."""
    return SCORE_RUN_NAME.format(sha=head_sha)


def _score_runs(gh: GitHub, head_sha: str) -> Iterator[dict[str, Any]]:
    """The runs of ``score-submission.yml`` that may be the scoring of ``head_sha``: those GitHub
    lists for that head sha, and those started by ``workflow_run`` since the first validation
    run of that commit (a scoring run follows one)."""
    workflows = "actions/workflows"
    yield from gh.pages(f"{workflows}/{SCORE_WORKFLOW}/runs", "workflow_runs", head_sha=head_sha)
    validated = [
        str(r.get("created_at"))
        for r in gh.pages(
            f"{workflows}/{VALIDATE_WORKFLOW}/runs",
            "workflow_runs",
            head_sha=head_sha,
            event="pull_request",
        )
        if isinstance(r, dict) and r.get("head_sha") == head_sha and r.get("created_at")
    ]
    if validated:
        yield from gh.pages(
            f"{workflows}/{SCORE_WORKFLOW}/runs",
            "workflow_runs",
            event="workflow_run",
            created=f">={min(validated)}",
        )


def approved_score_run(gh: GitHub, head_sha: str) -> Approval | None:
    """The approved run of ``score-submission.yml`` for ``head_sha``, if there is one.

    A run counts when it is of that workflow, started by ``workflow_run`` (the validation run's
    completion: only the default branch's workflow file runs so), for exactly that head commit
    (its ``head_sha``, or its title :func:`score_run_title`, which the workflow's ``run-name``
    sets from the validated run), and one of its approvals has state ``approved`` and names the
    ``submission-scoring`` Environment.

    Raises:
        GitHubError: the sha is malformed, or GitHub cannot be asked or answers oddly.
    """
    if not _SHA.match(head_sha):
        raise GitHubError("the head commit must be given as 40 lowercase hex digits")
    seen: set[int] = set()
    for run in _score_runs(gh, head_sha):
        if not isinstance(run, dict) or run.get("event") != "workflow_run":
            continue  # a pull request's own copy of the workflow runs on pull_request
        if run.get("head_sha") != head_sha and run.get("display_title") != score_run_title(
            head_sha
        ):
            continue  # the filters are GitHub's; the check is ours
        run_id = run.get("id")
        if not isinstance(run_id, int) or isinstance(run_id, bool) or run_id in seen:
            continue
        seen.add(run_id)
        found = _approval(run_id, gh.get(f"actions/runs/{run_id}/approvals"))
        if found is not None:
            return found
    return None


def open_pulls(gh: GitHub) -> list[tuple[int, str]]:
    """(number, head sha) of every open pull request, by number."""
    out = []
    for pr in gh.pages("pulls", state="open"):
        number = pr.get("number") if isinstance(pr, dict) else None
        head = pr.get("head") if isinstance(pr, dict) else None
        sha = head.get("sha") if isinstance(head, dict) else None
        if isinstance(number, int) and isinstance(sha, str) and _SHA.match(sha):
            out.append((number, sha))
    return sorted(out)


def submission_ids(gh: GitHub, number: int, submissions: str) -> set[str]:
    """The submission folders (under the repository-relative ``submissions`` folder) that pull
    request ``number`` changes."""
    base = PurePosixPath(submissions).parts if submissions not in ("", ".") else ()
    found = set()
    for f in gh.pages(f"pulls/{number}/files"):
        name = f.get("filename") if isinstance(f, dict) else None
        parts = PurePosixPath(name).parts if isinstance(name, str) else ()
        if len(parts) > len(base) + 1 and parts[: len(base)] == base:
            found.add(parts[len(base)])
    return found


def claimed_by(gh: GitHub, number: int, submission_id: str, submissions: str) -> int | None:
    """The open pull request with a lower number than ``number`` that changes the same submission
    folder (the first of them), if any: it holds the id.

    Raises:
        GitHubError: GitHub cannot be asked, or answers oddly.
    """
    for other, _ in open_pulls(gh):
        if other >= number:
            break
        if submission_id in submission_ids(gh, other, submissions):
            return other
    return None


__all__ = [
    "SCORE_ENVIRONMENT",
    "SCORE_RUN_NAME",
    "SCORE_WORKFLOW",
    "VALIDATE_WORKFLOW",
    "Approval",
    "GitHub",
    "GitHubError",
    "approved_score_run",
    "claimed_by",
    "open_pulls",
    "score_run_title",
    "submission_ids",
]
