"""``gamut-workbench build status``: counts per state of every step, and the step to run next."""

from __future__ import annotations

from collections import Counter
from typing import Any

from workbench.batch import in_flight
from workbench.evidence import EVIDENCE
from workbench.images import IMAGES
from workbench.questions import CANDIDATES, State, entered_questions, needs_proposals
from workbench.release import RELEASES
from workbench.store import RUBRIC_STATUS, Workbench
from workbench.usage import USAGE


def counts(wb: Workbench) -> dict[str, Any]:
    """Images, candidates per state, questions per rubric step (ids never text), batch
    requests in flight, and the live LLM calls' requests, tokens and cost per step and mode."""
    images: dict[str, Any] = wb.read(IMAGES, {})
    cands: dict[str, dict[str, Any]] = wb.read(CANDIDATES, {})
    status: dict[str, dict[str, str]] = wb.read(RUBRIC_STATUS, {})
    evidence: dict[str, Any] = wb.read(EVIDENCE, {})
    by_state = Counter(c["state"] for c in cands.values())
    entered = [q["question_id"] for q in entered_questions(wb)]
    return {
        "images": len(images),
        "images_needing_proposals": len(needs_proposals(images, cands)) if images else 0,
        "candidates": {s.value: by_state.get(s.value, 0) for s in State},
        "questions": len(entered),
        "with_evidence": sum(1 for q in entered if q in evidence),
        "drafted": sum(1 for q in entered if status.get(q, {}).get("draft") == "ok"),
        "draft_failed": sum(1 for q in entered if status.get(q, {}).get("draft") == "failed"),
        "refined": sum(1 for q in entered if status.get(q, {}).get("refine") == "ok"),
        "refine_failed": sum(1 for q in entered if status.get(q, {}).get("refine") == "failed"),
        "releases": [r["version"] for r in wb.read(RELEASES, [])],
        "batch_requests_in_flight": in_flight(wb),
        "llm_usage": wb.read(USAGE, {}),
    }


def next_step(c: dict[str, Any]) -> str:
    """The command to run next, from :func:`counts`."""
    if not c["images"]:
        return "gamut-workbench build images MANIFEST"
    if c["images_needing_proposals"]:
        return "gamut-workbench build propose --per-image K"
    if c["candidates"]["in_review"]:
        return "gamut-workbench build review apply DECISIONS (or review serve --annotator ID)"
    if c["candidates"]["accepted"]:
        return "gamut-workbench build guard"
    if c["with_evidence"] < c["questions"]:
        return "gamut-workbench build evidence"
    if c["drafted"] + c["draft_failed"] < c["with_evidence"]:
        return "gamut-workbench build draft"
    if c["refined"] + c["refine_failed"] < c["drafted"]:
        return "gamut-workbench build refine"
    return "gamut-workbench build release VERSION"
