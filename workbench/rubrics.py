"""Rubric construction: ``draft`` (an LLM meta-rubric grounded in the snippets) and ``refine`` (an
audit, then a rebuild as a verified superset of the draft), each validated with the problems fed
back for one repair, then compiled. Meta-rubrics are held: these return ids and counts only.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scoring.compiler import compile_rubric
from scoring.errors import RubricError
from scoring.rubric import MetaRubric
from workbench.evidence import EVIDENCE, SourcePages, audit
from workbench.llm import LLM, Deferred, ask
from workbench.questions import entered_questions
from workbench.revision import REVISIONS
from workbench.store import RUBRIC_STATUS, Checkpoint, Workbench

DRAFT_TEMPLATE = "draft_v1"
REPAIR_TEMPLATE = "repair_v1"
REFINE_TEMPLATE = "refine_v1"


class ItemsReply(BaseModel):
    """A meta-rubric's items as the model gives them (checked by :class:`MetaRubric` after)."""

    model_config = ConfigDict(extra="forbid")

    items: list[dict[str, Any]]
    removed: list[dict[str, str]] = Field(default_factory=list)


@functools.cache
def _schema() -> dict[str, Any]:
    full = MetaRubric.model_json_schema()
    items = full["properties"]["items"]
    return {
        "type": "object",
        "properties": {
            "items": items,
            "removed": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"item_id": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["item_id", "reason"],
                },
            },
        },
        "required": ["items"],
        "$defs": full.get("$defs", {}),
    }


def superset_problems(draft: MetaRubric, reply: ItemsReply) -> list[str]:
    """What makes a refined rubric not a verified superset of ``draft``: a draft item neither kept
    (same id) nor removed with a stated reason, or a removal of an item the draft lacks."""
    kept = {str(i.get("id")) for i in reply.items}
    removed = {r.get("item_id", ""): r.get("reason", "") for r in reply.removed}
    draft_ids = {i.id for i in draft.items}
    out = [
        f"draft item {i} is neither kept nor removed with a reason"
        for i in sorted(draft_ids - kept)
        if not removed.get(i, "").strip()
    ]
    out += [f"removed item {i} is not in the draft" for i in sorted(set(removed) - draft_ids)]
    return out


def _build(
    llm: LLM,
    template: str,
    qid: str,
    key: str,
    question: str,
    variables: dict[str, str],
    snippets: list[dict[str, Any]],
    draft: MetaRubric | None,
) -> tuple[MetaRubric | None, int, list[str]]:
    """Ask, validate, and on problems ask once more: (rubric or None, repairs, removed)."""
    reply = ask(llm, template, key, variables, ItemsReply, schema=_schema())
    cited = [
        {"id": s["id"], "url": s["url"], "title": s["title"], "text": s["text"]} for s in snippets
    ]
    for attempt in (0, 1):
        problems = [] if draft is None else superset_problems(draft, reply)
        rubric = None
        try:
            rubric = MetaRubric.model_validate(
                {"question_id": qid, "snippets": cited, "items": reply.items}
            )
        except RubricError as exc:
            problems += [p.message for p in exc.problems]
        if not problems and rubric is not None:
            compile_rubric(rubric)
            return rubric, attempt, [r["item_id"] for r in reply.removed]
        if attempt == 1:
            break
        reply = ask(
            llm,
            REPAIR_TEMPLATE,
            f"{template}:{key}",
            {
                "question": question,
                "reply": json.dumps(reply.model_dump(), ensure_ascii=False),
                "problems": "\n".join(f"- {p}" for p in problems),
            },
            ItemsReply,
            schema=_schema(),
        )
    return None, 1, []


def _step(wb: Workbench, llm: LLM, phase: str, pages: SourcePages | None = None) -> Counter[str]:
    evidence: dict[str, list[dict[str, Any]]] = wb.read(EVIDENCE, {})
    status: dict[str, dict[str, Any]] = wb.read(RUBRIC_STATUS, {})
    counts: Counter[str] = Counter()
    rounds = Counter(r["question_id"] for r in wb.read(REVISIONS, []))
    cp = Checkpoint(lambda: wb.write(RUBRIC_STATUS, status))
    for q in entered_questions(wb):
        qid = q["question_id"]
        st = status.setdefault(qid, {})
        key, base = qid, f"drafts/{qid}.json"
        if phase == "refine" and st.get("refine") == "ok" and rounds[qid] > st["refined_after"]:
            # a human revision round since the last refinement: refine the revised rubric
            passes = st.get("refine_passes", 1) + 1
            key, base = f"{qid}#{passes}", f"rubrics/{qid}.json"
        elif qid not in evidence or phase in st:
            continue
        if phase == "refine" and st.get("draft") != "ok":
            continue
        snippets = evidence[qid]
        variables = {
            "question": q["text_only_question"],
            "snippets": "\n".join(f"{s['id']} ({s['url']}): {s['text']}" for s in snippets),
        }
        draft = None
        if phase == "draft":
            template = DRAFT_TEMPLATE
        else:
            template = REFINE_TEMPLATE
            raw = wb.read(base)
            draft = MetaRubric.model_validate(raw)
            assert pages is not None
            st["audit"] = found = audit(raw, pages)
            variables["audit"] = _audit_text(found)
            variables["draft"] = json.dumps(
                [i.model_dump(mode="json", exclude_none=True) for i in draft.items],
                ensure_ascii=False,
            )
        try:
            rubric, repairs, removed = _build(
                llm, template, qid, key, q["text_only_question"], variables, snippets, draft
            )
        except Deferred:
            counts["waiting"] += 1  # batch mode: in a batch; the next run collects it
            continue
        folder = "drafts" if phase == "draft" else "rubrics"
        if rubric is not None:
            wb.write(f"{folder}/{qid}.json", rubric.model_dump(mode="json", exclude_none=True))
        if key != qid:  # a refinement after revision: the revised rubric stays if it fails
            counts["ok" if rubric is not None else "failed"] += 1
            if rubric is not None:
                st["refine_passes"] = passes
                st["refined_after"] = rounds[qid]
                st["removed"] = st.get("removed", []) + removed
            cp.touch()
            continue
        st[phase] = "ok" if rubric is not None else "failed"
        st[f"{phase}_repairs"] = repairs
        if phase == "refine":
            st["removed"] = removed
            st["refined_after"] = rounds[qid]
        counts[st[phase]] += 1
        counts["repaired"] += repairs if rubric is not None else 0
        cp.touch()
    cp.flush()
    return counts


def _audit_text(found: dict[str, Any]) -> str:
    lines = [f"{sid}: {state}" for sid, state in found["snippets"].items()]
    lines += [
        f"{p['item_id']}: {p['uncovered']} of {p['of']} members or steps not in its cited snippets"
        for p in found["partial"]
    ]
    return "\n".join(lines) or "(nothing cited)"


def draft(wb: Workbench, llm: LLM) -> Counter[str]:
    """Draft a meta-rubric for every entered question with snippets and no draft yet."""
    return _step(wb, llm, "draft")


def refine(wb: Workbench, llm: LLM, pages: SourcePages) -> Counter[str]:
    """Refine every draft not refined yet, and every rubric revised by a human round since its
    last refinement (replay key ``<question_id>#<pass>``), into a verified superset: the audit
    of its cited snippets against their ``pages`` goes to the model with the draft."""
    return _step(wb, llm, "refine", pages)
