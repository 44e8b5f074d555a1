"""The submission of a pull request, taken from its fetched head commit as data.

The validation run's artifact is not trusted (that run executes the pull request's code).
:func:`take_from_commit` reads the commit with ``git`` plumbing only: its changes must all lie in
one submission's folder, whose blobs must be regular files with the expected names and sizes.
Nothing is executed or checked out.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from gamut.pr import (
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    SHA,
    SUBMISSION_FILES,
    PrInfo,
    check_pr,
    install_submission,
)
from scoring.errors import GamutError, Problem, ProblemsError
from scoring.submissions.formats import is_submission_id
from scoring.submissions.layout import existing_submission_warning

if TYPE_CHECKING:
    from gamut.project import Project

_REGULAR = {"100644", "100755"}
_FIX_SCOPE = (
    "a submission pull request may only add or change files in its own folder "
    "<submissions>/<id>/; move other changes to a separate pull request"
)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, check=False, timeout=120
    )


def _out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", errors="replace")


def _commit(repo: Path, rev: str, what: str) -> str:
    """The full sha of ``rev`` (a commit already in the repository), never read as an option."""
    if not rev or rev.startswith("-") or any(c.isspace() or not c.isprintable() for c in rev):
        raise GamutError(f"{what} {rev!r} is not a git revision")
    proc = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    sha = _out(proc).strip()
    if proc.returncode != 0 or not SHA.match(sha):
        raise GamutError(
            f"{what} {rev!r} is not a commit of this repository; fetch it first "
            "(e.g. git fetch origin refs/pull/<number>/head)"
        )
    return sha


def _locate(project: Project) -> tuple[Path, PurePosixPath]:
    """The git repository's top folder and the submissions folder relative to it."""
    root = project.cfg.root
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise GamutError(f"{root} is not in a git repository")
    toplevel = Path(_out(top).strip())
    subs_abs = os.path.realpath(project.submissions_root)
    rel = os.path.relpath(subs_abs, os.path.realpath(toplevel))
    if rel == ".." or rel.startswith(".." + os.sep):
        raise GamutError("the submissions folder is outside the git repository")
    return toplevel, PurePosixPath(Path(rel).as_posix()) if rel != "." else PurePosixPath()


def submissions_in_repo(project: Project) -> str:
    """The submissions folder as a repository-relative POSIX path (``.`` for the top)."""
    return _locate(project)[1].as_posix()


def on_base(project: Project, submission_id: str, base: str = "HEAD") -> bool:
    """Whether the base commit (not the work tree, which ``gamut pr take`` may have written
    into) already holds the submission ``submission_id``."""
    toplevel, rel = _locate(project)
    folder = (rel / submission_id).as_posix()
    return _git(toplevel, "cat-file", "-e", f"{base}:{folder}").returncode == 0


def _one_submission(
    toplevel: Path, subs: PurePosixPath, base_sha: str, head_sha: str
) -> tuple[str, str, list[Problem]]:
    """The one submission the changes ``base...head`` touch, its first file changed, and the
    problems found; ProblemsError unless exactly one submission is touched."""
    diff = _git(
        toplevel, "diff", "--name-only", "--no-renames", "-z", "--end-of-options",
        f"{base_sha}...{head_sha}", "--",
    )  # fmt: skip
    if diff.returncode != 0:
        raise GamutError(f"cannot compare the head with the base: {_out(diff).strip()[:300]}")
    problems: list[Problem] = []
    touched: dict[str, list[str]] = {}
    for name in sorted({n for n in _out(diff).split("\0") if n}):
        parts = PurePosixPath(name).parts
        inner = parts[len(subs.parts) :]
        if parts[: len(subs.parts)] != subs.parts or len(inner) != 2:
            problems.append(Problem(name, None, "changed outside a submission folder", _FIX_SCOPE))
        else:
            touched.setdefault(inner[0], []).append(name)
    if len(touched) != 1:
        found = ", ".join(sorted(touched)) or "none"
        problems.append(
            Problem(
                f"{base_sha[:12]}...{head_sha[:12]}",
                None,
                f"the pull request must change exactly one submission (it changes: {found})",
                "open one pull request per submission",
            )
        )
        raise ProblemsError(problems, "the pull request's changes were not taken")
    ((sid, files),) = touched.items()
    if not is_submission_id(sid):
        problems.append(
            Problem((subs / sid).as_posix(), None, f"{sid!r} is not a valid submission id", "")
        )
    return sid, files[0], problems


def _blobs(toplevel: Path, head_sha: str, folder: str) -> tuple[dict[str, str], list[Problem]]:
    """The blob of each file of ``folder`` in the head commit, and the folder's problems."""
    listing = _git(toplevel, "ls-tree", "-z", "-l", "--full-tree", head_sha, "--", f"{folder}/")
    if listing.returncode != 0:
        raise GamutError(f"cannot list {folder} in the head commit")
    blobs: dict[str, str] = {}
    problems: list[Problem] = []
    total = 0
    for entry in filter(None, _out(listing).split("\0")):
        meta, _, path = entry.partition("\t")
        mode, kind, oid, size = [*meta.split(), "", "", "", ""][:4]
        file = PurePosixPath(path).name
        if kind != "blob" or mode not in _REGULAR:
            what = "a symbolic link" if mode == "120000" else f"a {kind or 'entry'} ({mode})"
            problems.append(Problem(path, None, f"is {what}", "keep only regular files"))
        elif file not in SUBMISSION_FILES:
            fix = "a submission holds only its three files"
            problems.append(Problem(path, None, "unexpected file", fix))
        elif not size.isdigit() or int(size) > MAX_FILE_BYTES:
            message = f"{size} bytes (at most {MAX_FILE_BYTES})"
            problems.append(Problem(path, None, message, "shorten it"))
        else:
            total += int(size)
            blobs[file] = oid
    if total > MAX_TOTAL_BYTES:
        problems.append(
            Problem(folder, None, f"{total} bytes in all", f"at most {MAX_TOTAL_BYTES}")
        )
    return blobs, problems


def take_from_commit(
    project: Project, pr_number: int, head: str, base: str
) -> tuple[PrInfo, list[Problem]]:
    """Copy the submission that ``base...head`` (head: a fetched full sha) adds or changes into
    the submissions folder; what was taken, and warnings (a change to an existing submission).
    """
    check_pr(pr_number, head)
    toplevel, subs = _locate(project)
    head_sha = _commit(toplevel, head, "head")
    base_sha = _commit(toplevel, base, "base")
    sid, first_file, problems = _one_submission(toplevel, subs, base_sha, head_sha)
    folder = (subs / sid).as_posix()
    blobs, wrong = _blobs(toplevel, head_sha, folder)
    if problems or wrong:
        raise ProblemsError(problems + wrong, f"the submission in {head_sha[:12]} was not taken")
    data = {}
    for file, oid in sorted(blobs.items()):
        blob = _git(toplevel, "cat-file", "blob", oid)
        if blob.returncode != 0 or len(blob.stdout) > MAX_FILE_BYTES:
            raise GamutError(f"cannot read {folder}/{file} from the head commit")
        data[file] = blob.stdout
    dest = Path(os.path.realpath(project.submissions_root)) / sid
    shown = install_submission(dest, data)
    warnings = existing_submission_warning(toplevel, base_sha, folder, sid, first_file)
    return PrInfo(pr_number, head_sha, sid, shown), warnings
