"""Run fingerprints: proof that a judge run, or a verdict table, has nothing new to do.

A fingerprint digests every input that can change what a run judges or writes (config, engine
code and prompts, input files by content, selection, key scheme, ledger shards, index state).
A complete run records it with its counts in ``<private>/runs/`` (one record per selection); a
later run with the same fingerprint returns those counts without reading anything else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scoring
from scoring.judge.outcome import JudgeReport, JudgeStats
from scoring.questions import Setting
from scoring.storage import atomic_write_text, open_regular

if TYPE_CHECKING:
    from gamut.project import Project

FORMAT = "1"
_ENGINE = Path(scoring.__file__).resolve().parent
_APP = Path(__file__).resolve().parent
#: Largest record read back (a damaged or hostile file is ignored, not parsed).
MAX_RECORD_BYTES = 1 << 20
_COUNTS = ("judge", "label", "identity", "checks", "empty")


def file_digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes (a link to one followed); OSError otherwise."""
    with open_regular(path, links=True) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _files(root: Path, patterns: Iterable[str]) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted({p for pat in patterns for p in root.rglob(pat) if p.is_file()})


def _update(h: Any, *parts: str) -> None:
    for p in parts:
        b = p.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little") + b)


def _inputs(project: Project, h: Any) -> None:
    """Every input file of the project, by content, in a fixed order."""
    from scoring.judge.inputs import list_submissions
    from scoring.rubric_io import rubric_files

    groups: list[tuple[str, list[Path]]] = [
        ("config", [project.cfg.file.resolve()]),
        ("engine", _files(_ENGINE, ["*.py", "prompts/*"])),
        ("application", _files(_APP, ["*.py"])),
        ("questions", [project.questions_path]),
        ("rubrics", rubric_files(project.rubrics_path) if project.rubrics_path.exists() else []),
    ]
    layout = project.submissions
    subs = [
        p
        for sid in list_submissions(layout.root)
        for s in Setting
        if (p := layout.responses(sid, s)).is_file()
    ]
    groups.append(("submissions", subs))
    for name, paths in groups:
        _update(h, name, str(len(paths)))
        for p in paths:
            try:
                _update(h, str(p), file_digest(p))
            except OSError:  # the run names it
                _update(h, str(p), "absent")


def _state(project: Project, h: Any) -> None:
    """The ledger's shards and the working index's file state (changed by every write)."""
    from scoring.ledger import KINDS

    led = project.ledger
    _update(h, led.scheme.scheme_id, str(led.held))
    for kind in KINDS:
        names = led.shard_names(kind)
        _update(h, kind, str(len(names)), *names)
    pushes = led.order_state()  # they decide which verdict of a key judged twice counts
    if pushes:
        _update(h, "pushes", *pushes)
    for p in (project.cache_path, project.cache_path.with_name(project.cache_path.name + "-wal")):
        st = p.stat() if p.exists() else None
        _update(h, p.name, "absent" if st is None else f"{st.st_size} {st.st_mtime_ns}")


def fingerprint(
    project: Project,
    what: str,
    judges: list[str] | None = None,
    submissions: list[str] | None = None,
    settings: list[Setting] | None = None,
) -> str:
    """The fingerprint of a run of ``what`` (``judge``, ``table``) over the selection."""
    h = hashlib.sha256()
    _update(h, FORMAT, scoring.__version__, what, str(project.rubrics_public))
    _update(h, *_selection(judges, submissions, settings))
    _inputs(project, h)
    _state(project, h)
    return h.hexdigest()


def _selection(
    judges: list[str] | None, submissions: list[str] | None, settings: list[Setting] | None
) -> list[str]:
    return [
        "judges",
        *(judges if judges is not None else ["*"]),
        "submissions",
        *(submissions if submissions is not None else ["*"]),
        "settings",
        *([s.value for s in settings] if settings is not None else ["*"]),
    ]


def _record_path(project: Project, what: str, selection: list[str]) -> Path:
    tag = hashlib.sha256("\0".join(selection).encode()).hexdigest()[:24]
    return project.private / "runs" / f"{what}-{tag}.json"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return None
        got = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # no usable record: the run does its full work, which is always correct
    return got if isinstance(got, dict) else None


def recorded_report(
    project: Project,
    fp: str,
    judges: list[str] | None,
    submissions: list[str] | None,
    settings: list[Setting] | None,
) -> JudgeReport | None:
    """The counts of the last complete judge run of this selection, if its fingerprint is
    ``fp``."""
    got = _read(_record_path(project, "judge", _selection(judges, submissions, settings)))
    if got is None or got.get("fingerprint") != fp or not isinstance(got.get("judges"), list):
        return None
    report = JudgeReport({}, dry_run=False)
    try:
        for s in got["judges"]:
            stats = JudgeStats(**{k: s[k] for k in _COUNTS})
            stats.cache_hits = stats.checks - stats.empty  # every verdict is in the ledger now
            report.judges[stats.judge] = stats
    except (KeyError, TypeError):
        return None
    report.notes.append(
        "nothing changed since the last complete run (same inputs, ledger and index): "
        "every pair has its verdict"
    )
    return report


def record_report(
    project: Project,
    fp: str,
    report: JudgeReport,
    judges: list[str] | None,
    submissions: list[str] | None,
    settings: list[Setting] | None,
) -> None:
    """Record a complete run's fingerprint and counts (not a run with failures or in flight)."""
    if not report.ok or report.dry_run or report.in_flight or report.waiting:
        return
    counts = [{k: asdict(s)[k] for k in _COUNTS} for s in report.judges.values()]
    path = _record_path(project, "judge", _selection(judges, submissions, settings))
    atomic_write_text(path, json.dumps({"fingerprint": fp, "judges": counts}) + "\n")


def table_is_recorded(
    project: Project, fp: str, out: Path, submissions: list[str] | None = None
) -> bool:
    """Whether the verdict and usage tables at ``out`` were written from fingerprint ``fp``."""
    from scoring.judge.table import table_is_current
    from scoring.judge.usage import usage_path

    got = _read(_record_path(project, "table", _selection(None, submissions, None)))
    if got is None or got.get("fingerprint") != fp or not isinstance(got.get("table"), str):
        return False
    return table_is_current(out, got["table"]) and table_is_current(usage_path(out), got["table"])


def record_table(
    project: Project, fp: str, table_fp: str, submissions: list[str] | None = None
) -> None:
    """Record that the verdict table with fingerprint ``table_fp`` was built from ``fp``."""
    path = _record_path(project, "table", _selection(None, submissions, None))
    atomic_write_text(path, json.dumps({"fingerprint": fp, "table": table_fp}) + "\n")
