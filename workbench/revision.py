"""Human revision of the compiled checks (``gamut-workbench build revise apply|serve``): an edit
gives a check's new content (a fact, member, step, aspect or insight) or deletes it, applied to
the item it came from; the rubric is recompiled and where the checklists differ is listed by
check id. Derived checks are edited through their parts. Two rounds, an LLM refinement between.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from scoring.compiler import Check, compile_rubric
from scoring.errors import Problem, ProblemsError, RubricError
from scoring.jsonl import read_jsonl, validated
from scoring.rubric import MetaRubric, NonEmpty
from workbench.store import RUBRIC_STATUS, Workbench, WorkbenchError

REVISIONS = "revisions.json"
_PART = re.compile(
    r"^(?P<item>[^.]+)(?:\.(?P<kind>[msabc])(?P<n>\d+)|\.(?P<single>i|e|seq|seq_all))?$"
)


class CheckEdit(BaseModel):
    """One edit of a check: new content, or ``delete``."""

    model_config = ConfigDict(extra="forbid")

    question_id: str
    check_id: str
    text: NonEmpty | None = None
    delete: bool = False


_FIELDS = {"m": "members", "s": "steps", "a": "aspects"}


def _part(item: dict[str, Any], m: re.Match[str]) -> tuple[Any, Any] | None:
    """Where the editable content of the check ``m`` names lives in ``item``: (container, key)."""
    if m["single"] == "i":
        return (item["insight"], "text") if "insight" in item else None
    if m["kind"] is None:
        return (item, "text") if item["type"] == "fact" else None
    parts = item.get(_FIELDS[m["kind"]])
    k = int(m["n"]) - 1
    if parts is None or not 0 <= k < len(parts):
        return None
    return (parts[k], "text") if m["kind"] == "s" else (parts, k)


def _apply(raw: dict[str, Any], edit: CheckEdit) -> str | None:
    """Apply ``edit`` to the rubric's JSON ``raw``; a problem message, or None when applied."""
    m = _PART.match(edit.check_id)
    item = next((i for i in raw["items"] if m and i["id"] == m["item"]), None)
    if m is None or item is None:
        return f"no check {edit.check_id}"
    whole = m["kind"] is None and m["single"] is None
    derived = m["kind"] in ("b", "c") or m["single"] in ("seq", "seq_all")
    if derived or (whole and item["type"] != "fact"):
        return f"{edit.check_id} is not a check of its own: edit its parts"
    if m["single"] == "e":
        return f"{edit.check_id} names the related entity: edit the relation in the meta-rubric"
    if edit.delete == (edit.text is not None):
        return "give either text or delete"
    where = _part(item, m)
    if where is None:
        return f"no check {edit.check_id}"
    if not edit.delete:
        where[0][where[1]] = edit.text
    elif m["single"] == "i":
        del item["insight"]
    elif whole:
        raw["items"].remove(item)
    else:
        parts = item[_FIELDS[m["kind"]]]
        del parts[int(m["n"]) - 1]
        if not parts and m["kind"] != "a":
            raw["items"].remove(item)
    return None


def _order(e: CheckEdit) -> tuple[str, str, int]:
    m = _PART.match(e.check_id)
    return (m["item"], m["kind"] or "", int(m["n"] or 0)) if m else (e.check_id, "", 0)


def part_value(item: dict[str, Any], check_id: str) -> str | None:
    """The editable content behind ``check_id`` in ``item`` (a fact's text, a member, a step,
    an aspect, an insight), or None for a check derived from several parts."""
    m = _PART.match(check_id)
    if m is None or m["kind"] in ("b", "c") or m["single"] in ("e", "seq", "seq_all"):
        return None
    where = _part(item, m)
    return None if where is None else str(where[0][where[1]])


def differences(
    edited: dict[str, Check | None],
    recompiled: list[Check],
    touched: frozenset[str] | set[str] = frozenset(),
) -> list[dict[str, str]]:
    """Where the edited checklist (``None``: a deleted check; ``touched``: the edited ones, as
    the annotator wrote them) and the recompiled one differ, by check id (no text)."""
    new = {c.check_id: c for c in recompiled}
    out = []
    for cid, c in edited.items():
        if cid in touched and c is not None:
            continue
        if c is None:
            if cid in new:
                out.append({"check_id": cid, "difference": "deleted, but recompiled (shifted)"})
        elif cid not in new:
            out.append({"check_id": cid, "difference": "missing after recompiling"})
        elif new[cid].text != c.text or new[cid].tier != c.tier:
            out.append({"check_id": cid, "difference": "recompiled differently"})
    out += [
        {"check_id": cid, "difference": "new after recompiling"} for cid in new if cid not in edited
    ]
    return out


#: Human revision rounds per rubric: round 1, an LLM refinement, round 2 (the paper's process).
MAX_ROUNDS = 2


def _round_refused(qid: str, rounds: int, status: dict[str, Any]) -> tuple[str, str] | None:
    """Why another human round of ``qid`` is refused (message, fix), or None: a third round,
    or a second before the LLM refinement that follows the first."""
    if rounds >= MAX_ROUNDS:
        return (
            f"question {qid} has had its {MAX_ROUNDS} human revision rounds (round 1, an LLM "
            "refinement, round 2); a third is not part of the process",
            "release it as it is, or correct or drop it: "
            f"`gamut-workbench build correct|drop {qid}`",
        )
    if rounds == 1 and status.get("refined_after", 0) < 1:
        return (
            f"question {qid}: round 1 is done and the LLM refinement that comes before round 2 "
            "has not run",
            "run `gamut-workbench build refine` first",
        )
    return None


def apply_edits(wb: Workbench, path: Path, annotator: str) -> Counter[str]:
    """Apply an edits file (JSON Lines of :class:`CheckEdit`) as one revision round of
    ``annotator`` (nothing written on a problem): counts of questions, edits, differing checks."""
    data = read_jsonl(path, str(path), "each line: {question_id, check_id, text | delete}")
    problems = list(data.problems)
    edits: dict[str, list[tuple[int | None, CheckEdit]]] = {}
    for line, e in validated(data.lines, CheckEdit.model_validate, str(path), "fix it", problems):
        edits.setdefault(e.question_id, []).append((line, e))
    return revise_rubrics(wb, edits, str(path), annotator, problems)


def revise_rubrics(
    wb: Workbench,
    edits: dict[str, list[tuple[int | None, CheckEdit]]],
    display: str,
    annotator: str,
    problems: list[Problem] | None = None,
) -> Counter[str]:
    """Apply checked edits by question as one round of ``annotator`` (see :func:`apply_edits`;
    problems name ``display``)."""
    problems = list(problems or [])
    results = {}
    history: list[dict[str, Any]] = wb.read(REVISIONS, [])
    rounds = Counter(r["question_id"] for r in history)
    status: dict[str, dict[str, Any]] = wb.read(RUBRIC_STATUS, {})
    for qid, mine in edits.items():
        raw = wb.read(f"rubrics/{qid}.json")
        if raw is None:
            problems.append(Problem(display, mine[0][0], f"no refined rubric {qid}", "refine it"))
            continue
        refused = _round_refused(qid, rounds[qid], status.get(qid, {}))
        if refused is not None:
            problems.append(Problem(display, mine[0][0], *refused))
            continue
        checks = {c.check_id: c for c in compile_rubric(MetaRubric.model_validate(raw))}
        edited: dict[str, Check | None] = dict(checks)
        # later parts first, so a deletion does not renumber the parts still to edit
        touched = set()
        for line, e in sorted(mine, key=lambda x: _order(x[1]), reverse=True):
            msg = _apply(raw, e)
            if msg is not None:
                problems.append(Problem(display, line, msg, "see `gamut rubric show`", qid))
            elif e.delete:
                edited[e.check_id] = None
            else:
                touched.add(e.check_id)
        try:
            rubric = MetaRubric.model_validate(raw)
        except RubricError as exc:
            problems += [Problem(display, None, p.message, p.fix, qid) for p in exc.problems]
            continue
        results[qid] = (rubric, mine, differences(edited, compile_rubric(rubric), touched))
    if problems:
        raise ProblemsError(problems, f"invalid edits file {display}")
    if not results:
        raise WorkbenchError(f"{display} holds no edits")
    counts: Counter[str] = Counter()
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    for qid, (rubric, mine, diff) in results.items():
        wb.write(f"rubrics/{qid}.json", rubric.model_dump(mode="json", exclude_none=True))
        history.append(
            {
                "question_id": qid,
                "round": rounds[qid] + 1,
                "annotator": annotator,
                "at": now,
                "edits": [
                    {"check_id": e.check_id, "action": "delete" if e.delete else "edit"}
                    for _, e in mine
                ],
                "differences": diff,
            }
        )
        counts["questions"] += 1
        counts["edits"] += len(mine)
        counts["differences"] += len(diff)
    wb.write(REVISIONS, history)
    return counts
