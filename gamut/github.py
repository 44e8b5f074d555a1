"""What the pull-request workflows ask GitHub's REST API (read-only token; every answer checked).

- :func:`approved_score_run`: the collector takes a pull request only when a maintainer approved
  a ``score-submission.yml`` run of its *current* head commit for the ``submission-scoring``
  Environment.
- :func:`claimed_by`: a submission id belongs to the open pull request that took it first
  (:func:`claim_time`), so two pull requests never share one folder.
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


@dataclass(frozen=True)
class Approval:
    """A maintainer's approval of a scoring run."""

    run_id: int
    approver: str

    def as_outputs(self) -> str:
        """``key=value`` lines for ``$GITHUB_OUTPUT`` (and the workflow's shell)."""
        return f"approved=true\nrun_id={self.run_id}\napprover={self.approver}\n"


class GitHub:
    """A tiny read-only client of one repository's (``owner/name``) REST API."""

    def __init__(self, repo: str, token: str, api_url: str = DEFAULT_API) -> None:
        if not _REPO.match(repo):
            raise GamutError(f"{repo!r} is not an owner/name repository")
        if not api_url.startswith(("https://", "http://")):
            raise GamutError(f"{api_url!r} is not an http(s) API address")
        self.repo = repo
        self.token = token
        self.api_url = api_url.rstrip("/")

    @classmethod
    def from_env(cls, repo: str | None = None) -> GitHub:
        """The client of ``$GITHUB_REPOSITORY``, ``$GH_TOKEN`` (else ``$GITHUB_TOKEN``) and
        ``$GITHUB_API_URL``."""
        repo = repo or os.environ.get("GITHUB_REPOSITORY", "")
        token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""
        if not repo:
            raise GamutError("no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY")
        if not token:
            raise GamutError("no token: set GH_TOKEN (in a workflow: ${{ github.token }})")
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
            raise GamutError(
                f"GitHub answered HTTP {exc.code} to GET {shown}; check the job's permissions "
                "(actions: read, pull-requests: read) and the token"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise GamutError(f"cannot reach GitHub at {shown}: {exc}; retry the run") from None
        if len(body) > MAX_BODY:
            raise GamutError(f"GitHub's answer to GET {shown} exceeds {MAX_BODY} bytes")
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise GamutError(f"GitHub's answer to GET {shown} is not JSON") from None
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
                raise GamutError(f"GitHub's answer to GET {path} is not a listing")
            yield from items
            found = _NEXT.search(link or "")
            url = found[1] if found and found[1].startswith(self.api_url + "/") else None
        raise GamutError(f"GET {path} has more than {MAX_PAGES} pages; narrow the query")


def _approval(run_id: int, entries: Any) -> Approval | None:
    if not isinstance(entries, list):
        raise GamutError(f"the approvals of run {run_id} are not a list")
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
    """The ``score-submission.yml`` runs that may score ``head_sha``: those listed for it, and
    the ``workflow_run`` ones since its first validation run (they carry main's sha)."""
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
    """The approved ``score-submission.yml`` run for ``head_sha``, if any: started by
    ``workflow_run`` (only the default branch's workflow file runs so), for exactly that commit
    (``head_sha`` or its :func:`score_run_title`), approved for ``submission-scoring``."""
    if not _SHA.match(head_sha):
        raise GamutError("the head commit must be given as 40 lowercase hex digits")
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


@dataclass(frozen=True)
class Pull:
    """An open pull request as the listing gives it."""

    number: int
    sha: str
    base: str
    #: ``owner/name`` of the repository its branch is in (None: that fork was deleted).
    head_repo: str | None
    head_ref: str
    opened: str


def _at(obj: Any, *keys: str) -> Any:
    """``obj[k1][k2]...``, or None where a level is missing."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _pull(pr: Any) -> Pull | None:
    number, sha, repo = (
        _at(pr, "number"),
        _at(pr, "head", "sha"),
        _at(pr, "head", "repo", "full_name"),
    )
    base, ref, opened = _at(pr, "base", "ref"), _at(pr, "head", "ref"), _at(pr, "created_at")
    if not (isinstance(number, int) and isinstance(sha, str) and _SHA.match(sha)):
        return None
    if not (isinstance(base, str) and isinstance(ref, str) and isinstance(opened, str)):
        return None
    return Pull(number, sha, base, repo if isinstance(repo, str) else None, ref, opened)


def open_pulls(gh: GitHub) -> list[Pull]:
    """Every open pull request, by number."""
    found = (_pull(pr) for pr in gh.pages("pulls", state="open"))
    return sorted((p for p in found if p is not None), key=lambda p: p.number)


def _changed(files: Any) -> Iterator[str]:
    """Every path a listing of changed files names (a rename's old path too)."""
    for f in files if isinstance(files, list) else ():
        for key in ("filename", "previous_filename"):
            name = f.get(key) if isinstance(f, dict) else None
            if isinstance(name, str):
                yield name


def _folders(paths: Iterator[str], submissions: str) -> tuple[set[str], bool]:
    """The submission folders the paths are in, and whether any path is outside them."""
    base = PurePosixPath(submissions).parts if submissions not in ("", ".") else ()
    found, outside = set(), False
    for name in paths:
        parts = PurePosixPath(name).parts
        if len(parts) > len(base) + 1 and parts[: len(base)] == base:
            found.add(parts[len(base)])
        else:
            outside = True
    return found, outside


def submission_ids(gh: GitHub, number: int, submissions: str) -> set[str]:
    """The submission folders that pull request ``number`` changes."""
    return _folders(_changed(list(gh.pages(f"pulls/{number}/files"))), submissions)[0]


def scorable_id(gh: GitHub, number: int, submissions: str) -> str | None:
    """The one submission folder pull request ``number`` changes, when it changes nothing else."""
    ids, outside = _folders(_changed(list(gh.pages(f"pulls/{number}/files"))), submissions)
    return next(iter(ids)) if len(ids) == 1 and not outside else None


def _validated(gh: GitHub, pull: Pull) -> dict[str, str]:
    """Commit -> first ``validate-submission.yml`` run time on the pull's own branch (repository
    and name) since it was opened."""
    out: dict[str, str] = {}
    for run in gh.pages(
        f"actions/workflows/{VALIDATE_WORKFLOW}/runs",
        "workflow_runs",
        event="pull_request",
        branch=pull.head_ref,
        created=f">={pull.opened}",
    ):
        sha, at = _at(run, "head_sha"), _at(run, "created_at")
        if (
            _at(run, "event") == "pull_request"
            and _at(run, "head_branch") == pull.head_ref
            and _at(run, "head_repository", "full_name") == pull.head_repo
            and isinstance(sha, str)
            and _SHA.match(sha)
            and isinstance(at, str)
            and at >= pull.opened
        ):
            out[sha] = min(out.get(sha, at), at)
    return out


def _scored_sha(run: Any, validated: dict[str, str]) -> str | None:
    """The validated commit a scoring run scores (title, else head sha), if the run started
    after that commit's first validation."""
    if not isinstance(run, dict) or run.get("event") != "workflow_run":
        return None
    title = str(run.get("display_title") or "")
    prefix = SCORE_RUN_NAME.format(sha="")
    sha = title[len(prefix) :] if title.startswith(prefix) else run.get("head_sha")
    at = run.get("created_at")
    if isinstance(sha, str) and sha in validated and isinstance(at, str):
        return sha if at >= validated[sha] else None
    return None


def _changes_only(gh: GitHub, pull: Pull, sha: str, submission_id: str, folder: str) -> bool:
    """Whether ``sha`` changes, against the base branch, only the submission's folder (GitHub
    lists at most 300 files: more is a no)."""
    listed = _at(gh.get(f"compare/{urllib.parse.quote(pull.base, safe='')}...{sha}"), "files")
    if not isinstance(listed, list) or not listed or len(listed) >= 300:
        return False
    return _folders(_changed(listed), folder) == ({submission_id}, False)


def claim_time(gh: GitHub, pull: Pull, submission_id: str, folder: str) -> tuple[str, int] | None:
    """When ``pull`` took ``submission_id``: (time, run id) of its first scoring run of a commit
    that (1) was validated on this pull's own branch before the run, (2) a maintainer approved
    and (3) changes only the submission's folder; None if none did.

    Each is durable and none is the author's to forge (a validation run alone would be: it runs
    the pull request's own code). The run id orders two runs of one second.
    """
    if pull.head_repo is None:
        return None
    validated = _validated(gh, pull)
    if not validated:
        return None
    runs = []
    for run in gh.pages(
        f"actions/workflows/{SCORE_WORKFLOW}/runs",
        "workflow_runs",
        event="workflow_run",
        created=f">={min(validated.values())}",
    ):
        sha, run_id = _scored_sha(run, validated), _at(run, "id")
        if sha is not None and isinstance(run_id, int) and not isinstance(run_id, bool):
            runs.append((str(run["created_at"]), run_id, sha))
    for at, run_id, sha in sorted(set(runs)):
        if _approval(run_id, gh.get(f"actions/runs/{run_id}/approvals")) is None:
            continue
        if _changes_only(gh, pull, sha, submission_id, folder):
            return at, run_id
    return None


def claimed_by(gh: GitHub, number: int, submission_id: str, submissions: str) -> int | None:
    """The open pull request that took ``submission_id`` before ``number`` did, if any.

    Only a pull request that could be scored now holds an id, from its :func:`claim_time`; the
    number plays no part, so an old pull request cannot reach into a newcomer's folder.
    """
    pulls = open_pulls(gh)
    rivals = [
        p
        for p in pulls
        if p.number != number and scorable_id(gh, p.number, submissions) == submission_id
    ]
    if not rivals:
        return None
    own = next((p for p in pulls if p.number == number), None)
    mine = None if own is None else claim_time(gh, own, submission_id, submissions)
    held = [
        (t, p.number)
        for p in rivals
        if (t := claim_time(gh, p, submission_id, submissions)) is not None
        and (mine is None or t < mine)
    ]
    return min(held)[1] if held else None
