"""What changed on the leaderboard (submissions added or changed, benchmark versions, judges), read
with ``git log`` for the site's change feed. A checkout without history (no git, a shallow
clone) says so, rather than dating every submission at its one commit."""

from __future__ import annotations

import datetime as dt
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from generator.spec import Change, ChangeKind, History
from scoring.submissions.formats import METADATA_FILE

#: Commits read at most (the newest), and entries kept.
MAX_COMMITS = 2_000
MAX_CHANGES = 100
#: Bytes of ``git log`` output read at most, and seconds a git call may take.
MAX_OUTPUT = 8_000_000
GIT_TIMEOUT_S = 30
#: Config revisions compared at most (each is one ``git show``).
MAX_CONFIG_REVISIONS = 50


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout[:MAX_OUTPUT].decode("utf-8", errors="replace")


def _toml_at(root: Path, commit: str, rel: str) -> dict[str, Any] | None:
    text = _git(root, "show", f"{commit}:{rel}")
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _benchmark_and_judges(doc: dict[str, Any] | None) -> tuple[Any, Any]:
    if doc is None:
        return None, None
    bench = doc.get("benchmark", {})
    version = (bench.get("questions"), bench.get("rubrics")) if isinstance(bench, dict) else None
    return version, doc.get("judges")


def read_history(config_file: Path, submissions: Path) -> History:
    """The changes of the submissions folder and the config file, newest first (at most
    :data:`MAX_CHANGES`)."""
    root = config_file.parent
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return History(unavailable="the project is not in a git repository")
    if (_git(root, "rev-parse", "--is-shallow-repository") or "").strip() == "true":
        return History(
            unavailable="the checkout is shallow (fetch the whole history: fetch-depth 0)"
        )
    top_path = Path(top.strip()).resolve()
    try:
        subs = submissions.resolve().relative_to(top_path).as_posix()
        conf = config_file.resolve().relative_to(top_path).as_posix()
    except ValueError:
        return History(unavailable="the submissions folder is outside the repository")
    log = _git(
        top_path,
        "log",
        f"-n{MAX_COMMITS}",
        "--no-renames",
        "--format=%x00%H%x09%cI",
        "--name-status",
        "--",
        subs,
        conf,
    )
    if log is None:
        return History(unavailable="git log failed")
    out: list[Change] = []
    config_commits: list[tuple[str, str]] = []
    for block in log.split("\0")[1:]:
        head, _, names = block.partition("\n")
        commit, _, stamp = head.partition("\t")
        try:
            when = dt.datetime.fromisoformat(stamp.strip()).astimezone(dt.UTC)
        except ValueError:
            continue
        when_text = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        added: set[str] = set()
        changed: set[str] = set()
        for line in names.splitlines():
            status, _, path = line.partition("\t")
            if path == conf:
                config_commits.append((commit, when_text))
                continue
            parts = path[len(subs) + 1 :].split("/") if path.startswith(subs + "/") else []
            if len(parts) < 2:
                continue
            if status == "A" and parts[1] == METADATA_FILE:
                added.add(parts[0])
            elif status in ("A", "M"):
                changed.add(parts[0])
        out += [Change(ChangeKind.SUBMISSION, commit, when_text, s) for s in sorted(added)]
        out += [Change(ChangeKind.RESPONSES, commit, when_text, s) for s in sorted(changed - added)]
    for commit, at in config_commits[:MAX_CONFIG_REVISIONS]:
        now = _benchmark_and_judges(_toml_at(top_path, commit, conf))
        before = _benchmark_and_judges(_toml_at(top_path, f"{commit}^", conf))
        if before == (None, None):
            continue  # the config's first version: nothing changed from
        if now[0] != before[0]:
            out.append(Change(ChangeKind.BENCHMARK, commit, at, detail=_version(now[0])))
        if now[1] != before[1]:
            out.append(Change(ChangeKind.JUDGES, commit, at))
    out.sort(key=lambda c: c.when, reverse=True)
    return History(tuple(out[:MAX_CHANGES]))


def _version(pair: Any) -> str:
    """The benchmark version as the config pins it (the rubrics' source)."""
    if isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], str):
        return pair[1][:200]
    return ""
