"""``gamut-workbench build correct | drop | release``: corrections, drops and a versioned release.

A release is ``questions.jsonl`` and the held ``rubrics/<question_id>.json``, ``release.json``
(the benchmark version stamped on the leaderboard's rows, the rubric set's hash) and a
``CHANGELOG.md`` against the previous release, checks by id only (check text is held).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from gamut.benchmark_version import RELEASE_FILE
from scoring.compiler import compile_rubric
from scoring.jsonl import dumps_line
from scoring.rubric import MetaRubric
from scoring.rubric_io import rubric_set_version
from scoring.storage import atomic_write_text
from workbench.questions import entered_questions
from workbench.store import Workbench, WorkbenchError

CORRECTIONS = "corrections.json"
RELEASES = "releases.json"
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


def record_correction(
    wb: Workbench, question_id: str, reason: str, entity: str | None = None
) -> None:
    """Correct a question's entity (``entity`` given) or drop the question, with a reason."""
    if not reason.strip():
        raise WorkbenchError("give a reason: it is listed in the release notes")
    known = {q["question_id"] for q in entered_questions(wb)}
    if question_id not in known:
        raise WorkbenchError(
            f"no entered question {question_id} (see `gamut-workbench build status`)"
        )
    corrections: dict[str, dict[str, Any]] = wb.read(CORRECTIONS, {})
    kind = "drop" if entity is None else "correct"
    corrections[question_id] = {"kind": kind, "entity": entity, "reason": reason.strip()}
    wb.write(CORRECTIONS, corrections)


def _check_digests(rubrics: dict[str, MetaRubric]) -> dict[str, str]:
    return {
        f"{qid}/{c.check_id}": hashlib.sha256(
            f"{c.kind}|{c.tier}|{c.secondary}|{c.text}".encode()
        ).hexdigest()
        for qid, r in rubrics.items()
        for c in compile_rubric(r)
    }


def _changelog(
    version: str,
    previous: dict[str, Any] | None,
    questions: list[dict[str, Any]],
    digests: dict[str, str],
    dropped: dict[str, str],
    corrected: dict[str, str],
) -> tuple[str, dict[str, Any]]:
    old_q = set(previous["questions"]) if previous else set()
    old_c: dict[str, str] = previous["checks"] if previous else {}
    qids = {q["question_id"] for q in questions}
    changes = {
        "questions_added": sorted(qids - old_q),
        "questions_dropped": sorted(old_q - qids | set(dropped)),
        "questions_corrected": sorted(corrected),
        "checks_added": sorted(set(digests) - set(old_c)),
        "checks_removed": sorted(set(old_c) - set(digests)),
        "checks_changed": sorted(k for k in digests if k in old_c and old_c[k] != digests[k]),
    }
    since = f"since {previous['version']}" if previous else "first release"
    lines = [f"# GAMUT {version}", "", f"{len(qids)} questions, {len(digests)} checks ({since})."]
    for key, ids in changes.items():
        lines += ["", f"## {key.replace('_', ' ').capitalize()} ({len(ids)})", ""]
        for i in ids:
            why = dropped.get(i) or corrected.get(i)
            lines.append(f"- {i}" + (f": {why}" if why else ""))
    return "\n".join(lines) + "\n", changes


def release(wb: Workbench, version: str, out: Path | None = None) -> dict[str, Any]:
    """Write release ``version`` to ``out`` (default ``<workbench>/releases/VERSION``): every
    entered question with a refined rubric that is not dropped (one without is listed dropped)."""
    if not re.fullmatch(VERSION_PATTERN, version):
        raise WorkbenchError(f"version {version!r}: use letters, digits, '.', '_', '-'")
    history: list[dict[str, Any]] = wb.read(RELEASES, [])
    if any(r["version"] == version for r in history):
        raise WorkbenchError(f"version {version} is already released: give a new version")
    corrections: dict[str, dict[str, Any]] = wb.read(CORRECTIONS, {})
    dropped = {q: c["reason"] for q, c in corrections.items() if c["kind"] == "drop"}
    corrected = {q: c["reason"] for q, c in corrections.items() if c["kind"] == "correct"}
    questions, rubrics = [], {}
    for q in entered_questions(wb):
        qid = q["question_id"]
        if qid in dropped:
            continue
        raw = wb.read(f"rubrics/{qid}.json")
        if raw is None:
            dropped[qid] = "no sound rubric"
            continue
        questions.append(q)
        rubrics[qid] = MetaRubric.model_validate(raw)
    if not questions:
        raise WorkbenchError(
            "no question has a refined rubric: run `gamut-workbench build refine` first"
        )
    digests = _check_digests(rubrics)
    previous = history[-1] if history else None
    text, changes = _changelog(version, previous, questions, digests, dropped, corrected)
    dest = out or wb.path(f"releases/{version}")
    if (dest / "questions.jsonl").exists() or (dest / "rubrics").exists():
        raise WorkbenchError(
            f"{dest} already holds a release: give a new folder (stale rubrics would stay)"
        )
    atomic_write_text(dest / "questions.jsonl", "".join(dumps_line(q) + "\n" for q in questions))
    for qid, r in rubrics.items():
        body = json.dumps(
            r.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False
        )
        atomic_write_text(dest / "rubrics" / f"{qid}.json", body + "\n")
    meta = {
        "benchmark_version": version,
        "rubric_version": rubric_set_version(rubrics),
        "previous": previous["version"] if previous else None,
        "n_questions": len(questions),
        "n_checks": len(digests),
        "changes": {k: len(v) for k, v in changes.items()},
    }
    atomic_write_text(dest / RELEASE_FILE, json.dumps(meta, indent=2) + "\n")
    atomic_write_text(dest / "CHANGELOG.md", text)
    history.append(
        {
            "version": version,
            "questions": sorted(rubrics),
            "checks": digests,
            "path": str(dest),
        }
    )
    wb.write(RELEASES, history)
    return meta
