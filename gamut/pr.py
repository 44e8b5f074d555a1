"""The pull-request pipeline's hand-offs: annotations, and the artifact between the workflows.

``validate-submission.yml`` runs untrusted code with no secrets and hands ``score-submission.yml``
an artifact (the submission's files, the validator's report, ``pr.json``); the scoring side reads
it purely as data (:func:`unpack_artifact`: regular files at expected paths, within size limits).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.workflow_commands import Level, annotation
from scoring.errors import GamutError, Problem, ProblemsError
from scoring.storage import atomic_write_bytes, atomic_write_text, open_regular
from scoring.submissions.formats import METADATA_FILE, RESPONSE_FILES, is_submission_id

if TYPE_CHECKING:
    from gamut.project import Project

PR_FILE = "pr.json"
REPORT_FILE = "validation.json"
SUBMISSION_FILES = frozenset({METADATA_FILE, *RESPONSE_FILES.values()})
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 40 * 1024 * 1024
MAX_FILES = 8
SHA = re.compile(r"^[0-9a-f]{40}$")
#: Annotations emitted per report (GitHub shows only the first ten of each kind per step); the
#: rest are counted in one more annotation and listed in the step summary.
MAX_ANNOTATIONS = 30
#: Rows of the step summary's problem table.
MAX_SUMMARY_ROWS = 200


@dataclass(frozen=True)
class PrInfo:
    """What the scoring workflow learns from the artifact, every field validated."""

    pr_number: int
    head_sha: str
    submission_id: str
    submission_path: str = ""

    def as_outputs(self) -> str:
        """``key=value`` lines for ``$GITHUB_OUTPUT``."""
        lines = [
            f"pr_number={self.pr_number}",
            f"head_sha={self.head_sha}",
            f"submission_id={self.submission_id}",
        ]
        if self.submission_path:
            lines.append(f"submission_path={self.submission_path}")
        return "\n".join(lines) + "\n"


def check_pr(pr_number: int, head_sha: str) -> None:
    """Refuse a PR number out of range or a head sha that is not 40 lowercase hex digits."""
    if not 0 < pr_number < 10**9:
        raise GamutError(f"PR number {pr_number} is out of range")
    if not SHA.match(head_sha):
        raise GamutError("head sha must be 40 lowercase hex digits")


# --- the validation side ------------------------------------------------------------------------


@dataclass(frozen=True)
class Annotations:
    """What ``gamut pr annotate`` makes of a validator report: workflow commands, step summary."""

    commands: list[str]
    summary: str


def annotate(report: dict[str, Any], base: str = "") -> Annotations:
    """One GitHub annotation per problem of a validator JSON report (at most
    :data:`MAX_ANNOTATIONS`) and the step summary; ``base`` prefixes the file paths."""
    raw = report.get("problems", [])
    problems = [p for p in raw if isinstance(p, dict)] if isinstance(raw, list) else []
    errors = [p for p in problems if p.get("severity") == "error"]
    warns = [p for p in problems if p.get("severity") != "error"]
    commands = []
    for p in [*errors, *warns][:MAX_ANNOTATIONS]:
        level: Level = "error" if p.get("severity") == "error" else "warning"
        msg = str(p.get("message", ""))[:1000] + (f" ({p['fix']})" if p.get("fix") else "")
        file = f"{base}{p['file']}" if p.get("file") else None
        line = p.get("line")
        line = line if isinstance(line, int) and not isinstance(line, bool) else None
        commands.append(annotation(level, msg, title="GAMUT submission", file=file, line=line))
    if len(problems) > MAX_ANNOTATIONS:
        rest = len(problems) - MAX_ANNOTATIONS
        commands.append(
            annotation(
                "error" if errors else "warning",
                f"{rest} more problem(s) not annotated ({len(errors)} error(s), {len(warns)} "
                "warning(s) in all); the step summary lists the first "
                f"{min(len(problems), MAX_SUMMARY_ROWS)}, and `gamut submission validate` all "
                "of them",
                title="GAMUT submission",
            )
        )
    subs = ", ".join(f"`{s}`" for s in report.get("submissions", [])) or "no submission"
    head = "passed" if report.get("ok") else "failed"
    lines = [
        f"## Submission validation {head}",
        "",
        f"Checked {subs}: {len(errors)} error(s), {len(warns)} warning(s).",
        "",
    ]
    if problems:
        lines += ["| severity | where | problem | fix |", "| --- | --- | --- | --- |"]
        for p in [*errors, *warns][:MAX_SUMMARY_ROWS]:
            where = str(p.get("file", "")) + (f":{p['line']}" if p.get("line") else "")
            cells = [
                str(p.get("severity", "")),
                where,
                str(p.get("message", "")),
                str(p.get("fix", "")),
            ]
            lines.append(
                "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
            )
        if len(problems) > MAX_SUMMARY_ROWS:
            lines += ["", f"... and {len(problems) - MAX_SUMMARY_ROWS} more."]
    return Annotations(commands, "\n".join(lines) + "\n")


def pack_artifact(
    project: Project, report: dict[str, Any], pr_number: int, head_sha: str, out: Path
) -> PrInfo:
    """Write the artifact folder: ``pr.json``, the report and ``submissions/<id>/`` files."""
    check_pr(pr_number, head_sha)
    if not report.get("ok"):
        raise GamutError("the validation report has errors; nothing to hand over")
    subs = report.get("submissions", [])
    if len(subs) != 1 or not is_submission_id(str(subs[0])):
        raise GamutError(f"a pull request must add exactly one submission (found: {subs})")
    sid = str(subs[0])
    folder = project.submissions.folder(sid).path
    for name in sorted(SUBMISSION_FILES):
        if os.path.lexists(folder / name):  # validated: a regular file (else refused by name)
            atomic_write_bytes(out / "submissions" / sid / name, _read(folder / name))
    info = PrInfo(pr_number, head_sha, sid)
    atomic_write_text(
        out / PR_FILE,
        json.dumps({"pr_number": pr_number, "head_sha": head_sha, "submission_id": sid}) + "\n",
    )
    atomic_write_text(out / REPORT_FILE, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return info


# --- the scoring side ---------------------------------------------------------------------------


def _walk(root: Path) -> tuple[list[str], list[Problem]]:
    """Every regular file under ``root`` as a POSIX relative path; anything else is a problem."""
    files: list[str] = []
    problems: list[Problem] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            mode = full.lstat().st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                problems.append(
                    Problem(
                        rel,
                        None,
                        "not a regular file (symlink or device)",
                        "the artifact may hold plain files only",
                    )
                )
            else:
                files.append(rel)
    return sorted(files), problems


def _submissions(artifact: Path, files: list[str]) -> tuple[dict[str, list[str]], list[Problem]]:
    """The files of each submission in the artifact, and what breaks the rules (counts, sizes,
    paths, not exactly one submission)."""
    where = str(artifact)
    problems: list[Problem] = []
    if len(files) > MAX_FILES:
        message = f"{len(files)} files (at most {MAX_FILES})"
        problems.append(Problem(where, None, message, "the artifact holds one submission"))
    total = 0
    subs: dict[str, list[str]] = {}
    for rel in files:
        size = (artifact / rel).lstat().st_size
        total += size
        if size > MAX_FILE_BYTES:
            message = f"{size} bytes (at most {MAX_FILE_BYTES})"
            problems.append(Problem(rel, None, message, "the validator rejects files this large"))
        parts = rel.split("/")
        if rel in {PR_FILE, REPORT_FILE}:
            continue
        if (
            len(parts) == 3
            and parts[0] == "submissions"
            and is_submission_id(parts[1])
            and parts[2] in SUBMISSION_FILES
        ):
            subs.setdefault(parts[1], []).append(parts[2])
        else:
            fix = "only pr.json, validation.json and submissions/<id>/ files"
            problems.append(Problem(rel, None, "unexpected path in the artifact", fix))
    if total > MAX_TOTAL_BYTES:
        problems.append(Problem(where, None, f"{total} bytes in all", f"at most {MAX_TOTAL_BYTES}"))
    if len(subs) != 1:
        message = f"holds {len(subs)} submissions ({', '.join(sorted(subs))})"
        problems.append(Problem(where, None, message, "a pull request adds exactly one submission"))
    return subs, problems


def install_submission(dest: Path, files: dict[str, bytes]) -> str:
    """Replace the folder ``dest`` (a link is removed, not followed) by ``files``, each written
    atomically; return the folder as shown to a user."""
    if dest.is_symlink():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    for name, data in files.items():
        atomic_write_bytes(dest / name, data)
    shown = os.path.relpath(dest)
    return shown if not shown.startswith("..") else str(dest)


def unpack_artifact(project: Project, artifact: Path) -> PrInfo:
    """Check the downloaded artifact (only ``pr.json``, ``validation.json`` and one valid
    submission's files; no links; size limits) and copy its submission into the submissions
    folder, replacing any folder of that id. Every broken rule is listed."""
    if not artifact.is_dir() or artifact.is_symlink():
        raise GamutError(f"{artifact} is not a folder; download the artifact first")
    files, problems = _walk(artifact)
    subs, wrong = _submissions(artifact, files)
    problems += wrong
    info = _read_pr(artifact / PR_FILE) if PR_FILE in files else None
    if info is None:
        raise GamutError(f"{artifact} has no {PR_FILE}; was it made by `gamut pr pack`?")
    sid = info.submission_id
    if subs and sid not in subs:
        message = "names a submission the artifact does not hold"
        problems.append(Problem(PR_FILE, None, message, "rebuild the artifact"))
    if problems:
        raise ProblemsError(problems, f"artifact {artifact} rejected")
    data = {name: _read(artifact / "submissions" / sid / name) for name in subs[sid]}
    shown = install_submission(project.submissions.folder(sid).path, data)
    return replace(info, submission_path=shown)


def _read(path: Path) -> bytes:
    """The bytes of a regular file of the artifact (at most :data:`MAX_FILE_BYTES`)."""
    with open_regular(path) as f:
        return f.read(MAX_FILE_BYTES + 1)


def _read_pr(path: Path) -> PrInfo:
    try:
        raw = json.loads(_read(path))
        pr_number, head_sha, sid = raw["pr_number"], raw["head_sha"], raw["submission_id"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        raise GamutError(f"{PR_FILE} is not the expected JSON object") from None
    if not isinstance(pr_number, int) or isinstance(pr_number, bool):
        raise GamutError(f"{PR_FILE}: pr_number must be an integer")
    if not isinstance(head_sha, str) or not isinstance(sid, str) or not is_submission_id(sid):
        raise GamutError(f"{PR_FILE}: head_sha and submission_id must be valid strings")
    check_pr(pr_number, head_sha)
    return PrInfo(pr_number, head_sha, sid)
