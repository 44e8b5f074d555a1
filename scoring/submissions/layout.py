"""Which submission folders to validate, and whether their files are where they should be."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from scoring.errors import Problem
from scoring.submissions.formats import (
    METADATA_FILE,
    REQUIRED_FILES,
    RESPONSE_FILES,
    SUBMISSION_ID_RULE,
    is_submission_id,
)

#: Files allowed directly in the submissions folder, outside any submission.
ROOT_FILES = frozenset({"README.md", ".gitkeep"})
ALLOWED_FILES = frozenset({METADATA_FILE, *RESPONSE_FILES.values()})
#: Unexpected entries of a submission folder listed one by one; the rest are counted.
MAX_LISTED_ENTRIES = 50
_ONLY = "a submission folder holds only " + ", ".join(sorted(ALLOWED_FILES))
_STRAY = ("file outside any submission folder", "move it into submissions/<id>/ or remove it")


def display_path(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when inside it (POSIX separators), else absolute."""
    absolute = os.path.abspath(path)
    return Path(_inside(absolute, os.path.abspath(base)) or absolute).as_posix()


def _inside(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` when inside it (both absolute), else None."""
    rel = os.path.relpath(path, folder)
    return None if rel == ".." or rel.startswith(".." + os.sep) else rel


def targets_from_paths(
    subs_root: Path, paths: list[Path], base: Path
) -> tuple[list[str], bool, list[Problem]]:
    """Turn PATH arguments into submission ids: the ids, whether the whole folder was named, and
    the problems."""
    ids: list[str] = []
    everything = False
    problems: list[Problem] = []
    root = os.path.abspath(subs_root)
    for p in paths:
        shown = Path(p).as_posix()
        rel = None if ".." in Path(p).parts else _inside(os.path.abspath(p), root)
        parts = Path(rel).parts if rel is not None else ()
        first = os.path.join(root, parts[0]) if parts else root
        wrong: tuple[str, str] | None = None
        if ".." in Path(p).parts:
            inside = "name a folder or file inside the submissions folder directly"
            wrong = ("path contains '..'", inside)
        elif rel is None:
            where = display_path(subs_root, base)
            own = "a submission lives in its own folder <submissions>/<id>/"
            wrong = (f"outside the submissions folder {where}", own)
        elif rel == "." or not parts:
            everything = True
        elif not os.path.lexists(first):
            wrong = ("no such submission folder", "create it with `gamut submission new ID`")
        elif len(parts) == 1 and os.path.isfile(first) and not os.path.islink(first):
            wrong = None if parts[0] in ROOT_FILES else _STRAY
        elif parts[0] not in ids:
            ids.append(parts[0])
        if wrong is not None:
            problems.append(Problem(shown, None, *wrong))
    return ids, everything, problems


def all_targets(subs_root: Path, base: Path) -> tuple[list[str], list[Problem]]:
    """Every entry of the submissions folder, and the stray files directly inside it."""
    ids: list[str] = []
    problems: list[Problem] = []
    for entry in sorted(os.scandir(subs_root), key=lambda e: e.name):
        if entry.name in ROOT_FILES and entry.is_file(follow_symlinks=False):
            continue
        if entry.is_file(follow_symlinks=False):
            problems.append(Problem(display_path(Path(entry.path), base), None, *_STRAY))
        else:
            ids.append(entry.name)
    return ids, problems


def check_folder(
    folder: Path, base: Path, others: list[str]
) -> tuple[dict[str, Path], list[Problem]]:
    """Check a submission folder's name and contents: the usable files by name, and the problems."""
    shown = display_path(folder, base)
    name = folder.name
    problems: list[Problem] = []

    def error(file: str, msg: str, fix: str) -> None:
        problems.append(Problem(file, None, msg, fix))

    if not is_submission_id(name):
        error(
            shown,
            f"folder name {name!r} is not a valid submission id",
            f"rename it: {SUBMISSION_ID_RULE}",
        )
    key = re.sub(r"[-_.]", "", name)
    for other in others:
        if other != name and re.sub(r"[-_.]", "", other) == key:
            error(
                shown,
                f"submission id {name!r} is too close to existing {other!r}",
                "choose an id that differs in more than '-', '_' or '.'",
            )
    if folder.is_symlink():
        error(shown, "submission folder is a symbolic link", "replace it with a real folder")
        return {}, problems
    if not folder.is_dir():
        error(shown, "not a folder", f"{_ONLY}; create it with `gamut submission new ID`")
        return {}, problems
    files: dict[str, Path] = {}
    entries = sorted(os.scandir(folder), key=lambda e: e.name)
    n_before = len(problems)
    unlisted = 0
    for entry in entries:
        if len(problems) - n_before >= MAX_LISTED_ENTRIES and entry.name not in ALLOWED_FILES:
            unlisted += 1  # a folder of 20,000 junk files gets 50 lines and a count
            continue
        path = Path(entry.path)
        where = display_path(path, base)
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            error(where, "is a symbolic link", "replace it with the real file")
        elif stat.S_ISDIR(mode):
            error(where, "unexpected folder inside the submission", f"remove it; {_ONLY}")
        elif entry.name not in ALLOWED_FILES:
            error(where, "unexpected file", f"remove it; {_ONLY}")
        elif not stat.S_ISREG(mode):
            error(where, "not a regular file", "replace it with a regular file")
        else:
            files[entry.name] = path
    if unlisted:
        error(shown, f"{unlisted} more unexpected entries are not listed", f"remove them; {_ONLY}")
    for required in REQUIRED_FILES:
        if required not in files and not os.path.lexists(folder / required):
            what, fix = (
                ("metadata", "run `gamut submission new ID` for a commented template")
                if required == METADATA_FILE
                else ("responses to the multimodal questions", "run `gamut generate` to write it")
            )
            error(f"{shown}/{required}", f"missing {required} ({what})", fix)
    return files, problems


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=120
    )


def _outside_problem(toplevel: Path, ref: str, name: str, how: str, own: str) -> Problem:
    """A file changed outside the submission folder ``own``, with the command that cleans it up."""
    scope = f"a submission pull request may only add or change files in its own folder {own}"
    if how == "untracked":
        return Problem(
            name,
            None,
            "untracked file outside a submission folder (git sees it, though it is not committed)",
            f"{scope}: delete it (`git clean -n -- {name}` shows, `git clean -f -- {name}` "
            "deletes), or keep such files under .gamut/, which git ignores",
        )
    if how == "uncommitted":
        fix = f"{scope}: undo the change with `git restore -- {name}`"
        return Problem(name, None, "changed outside a submission folder (not committed)", fix)
    at_base = _git(toplevel, "cat-file", "-e", f"{ref}:{name}").returncode == 0
    undo = f"`git checkout {ref} -- {name}`" if at_base else f"`git rm -- {name}`"
    fix = f"{scope}: undo it with {undo} then commit, or move the change to a separate pull request"
    message = "changed outside a submission folder (committed on this branch)"
    return Problem(name, None, message, fix)


def _outside_problems(
    toplevel: Path, ref: str, outside: list[str], how: dict[str, str], own: str
) -> list[Problem]:
    """One problem per file changed outside ``own``, except that the files of a folder git sees
    as wholly untracked are one problem for the folder (``git ls-files --directory``)."""
    loose = [n for n in outside if how[n] == "untracked"]
    folders: dict[str, list[str]] = {}
    if len(loose) > 1:
        listed = _git(
            toplevel, "ls-files", "--others", "--exclude-standard", "--directory", "-z"
        ).stdout
        dirs = sorted((d for d in listed.split("\0") if d.endswith("/")), key=len, reverse=True)
        for name in loose:
            folder = next((d for d in dirs if name.startswith(d)), None)
            if folder is not None:
                folders.setdefault(folder, []).append(name)
    grouped = {n for names in folders.values() if len(names) > 1 for n in names}
    problems = [
        _outside_problem(toplevel, ref, name, how[name], own)
        for name in outside
        if name not in grouped
    ]
    scope = f"a submission pull request may only add or change files in its own folder {own}"
    for folder, names in sorted(folders.items()):
        if len(names) > 1:
            problems.append(
                Problem(
                    folder,
                    None,
                    f"untracked folder outside a submission folder ({len(names)} files; git "
                    "sees them, though they are not committed)",
                    f"{scope}: delete it (`git clean -n -d -- {folder}` shows, "
                    f"`git clean -f -d -- {folder}` deletes), or keep such files under .gamut/, "
                    "which git ignores",
                )
            )
    return problems


def _changes(
    subs_root: Path, ref: str, where: str
) -> tuple[Path, tuple[str, ...], dict[str, str]] | Problem:
    """The repository's top folder, the submissions folder's path in it (as parts), and how
    each changed file differs: ``committed`` on the branch since ``ref``, ``uncommitted`` or
    ``untracked``; or the problem (at ``where``) that stops finding them."""

    def problem(message: str, fix: str) -> Problem:
        return Problem(where, None, message, fix)

    if not ref or ref.startswith("-") or any(c.isspace() or not c.isprintable() for c in ref):
        fix = "pass a branch name or commit sha, e.g. --changed-from origin/main"
        return problem(f"{ref!r} is not a git revision", fix)
    top = _git(subs_root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        fix = "run inside a clone of the leaderboard repository"
        return problem("the submissions folder is not in a git repository", fix)
    toplevel = Path(top.stdout.strip())
    # the revision is never read as an option, whatever it holds
    diff = _git(
        toplevel, "diff", "--name-only", "--no-renames", "-z", "--end-of-options",
        f"{ref}...HEAD", "--",
    )  # fmt: skip
    if diff.returncode != 0:
        fix = "fetch the base branch first, e.g. `git fetch origin main`, or pass a valid ref"
        return problem(f"cannot compare with {ref!r}: {diff.stderr.strip()}", fix)
    subs_rel = _inside(os.path.realpath(subs_root), os.path.realpath(toplevel))
    if subs_rel is None:
        fix = "check [benchmark] submissions in the config"
        return problem("the submissions folder is outside the git repository", fix)
    how: dict[str, str] = {}
    for kind, args in (
        ("untracked", ("ls-files", "--others", "--exclude-standard", "-z")),
        ("uncommitted", ("diff", "--name-only", "--no-renames", "-z", "HEAD", "--")),
    ):
        how.update({n: kind for n in _git(toplevel, *args).stdout.split("\0") if n})
    how.update({n: "committed" for n in diff.stdout.split("\0") if n})
    return toplevel, Path(subs_rel).parts if subs_rel != "." else (), how


def existing_submission_warning(
    toplevel: Path, ref: str, folder: str, sid: str, file: str
) -> list[Problem]:
    """A warning at ``file`` when the submission ``sid`` (``folder``, relative to the top of the
    repository ``toplevel``) already exists at ``ref``: a pull request never replaces it."""
    if _git(toplevel, "cat-file", "-e", f"{ref}:{folder}").returncode != 0:
        return []
    return [
        Problem(
            file,
            None,
            f"changes the existing submission {sid!r}",
            "a merged submission is never replaced by a pull request (the scoring run "
            "refuses it): submit the new responses under a new id, such as ID-v2; to "
            "correct or withdraw the merged one, ask the maintainers",
            severity="warning",
        )
    ]


def changed_targets(subs_root: Path, ref: str, base: Path) -> tuple[list[str], list[Problem]]:
    """The submission touched by the changes since ``ref``; every file outside it is a problem.

    The changes are ``git diff --name-only REF...HEAD`` plus untracked files and uncommitted
    changes (none in CI). They must all lie in one submission's own folder.
    """
    where = f"--changed-from {ref}"
    found = _changes(subs_root, ref, where)
    if isinstance(found, Problem):
        return [], [found]
    toplevel, subs_parts, how = found
    touched: dict[str, list[str]] = {}
    outside: list[str] = []
    for name in sorted(how):
        parts = Path(name).parts
        inner = parts[len(subs_parts) :]
        if parts[: len(subs_parts)] != subs_parts or len(inner) < 2:
            outside.append(name)
        else:
            touched.setdefault(inner[0], []).append(name)
    subs_shown = Path(*subs_parts).as_posix() if subs_parts else "."
    own = f"{subs_shown}/{next(iter(touched))}/" if len(touched) == 1 else f"{subs_shown}/<id>/"
    problems = _outside_problems(toplevel, ref, outside, how, own)
    several = f"the change touches several submissions ({', '.join(sorted(touched))})"
    for sid in sorted(touched)[1:]:
        problems.append(
            Problem(touched[sid][0], None, several, "open one pull request per submission")
        )
    if not touched and not problems:
        fix = f"add your folder under {subs_shown}/ (`gamut submission new ID`)"
        problems.append(Problem(where, None, "the change touches no submission", fix))
    for sid, names_in in sorted(touched.items()):
        folder = Path(*subs_parts, sid).as_posix()
        problems += existing_submission_warning(toplevel, ref, folder, sid, names_in[0])
    return sorted(touched), problems


def first_in_history(subs_root: Path, sid: str) -> int | None:
    """Where ``sid`` entered the first-parent history of HEAD: the number of first-parent
    commits up to the oldest one that added its ``submission.yaml`` (a merge counts as the
    commit that brought it to the branch); None when no such commit has it (a folder only the
    work tree holds, no git repository, or git missing). Commit dates play no part: a pull
    request's author sets those."""
    try:
        log = _git(
            subs_root, "--literal-pathspecs", "log", "--first-parent", "--topo-order",
            "--diff-filter=A", "--format=%H", "--", f"{sid}/{METADATA_FILE}",
        )  # fmt: skip
        added = log.stdout.split() if log.returncode == 0 else []
        if not added:
            return None
        count = _git(subs_root, "rev-list", "--first-parent", "--count", added[-1])
    except (OSError, subprocess.TimeoutExpired):
        return None  # no history to go by: the caller names both submissions
    return int(count.stdout) if count.returncode == 0 and count.stdout.strip().isdigit() else None
