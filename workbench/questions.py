"""Question construction: ``propose``, the review rounds and ``guard`` (the paper's process).
Two blind annotators review each candidate per round, a third adjudicates a disagreement; a
revised one re-enters the next round; an image with every candidate discarded or rejected is
proposed for again. Only a candidate accepted and selected by the guard enters the benchmark.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scoring.errors import Problem, ProblemsError
from scoring.jsonl import read_jsonl, validated
from scoring.rubric import NonEmpty
from workbench.images import IMAGES
from workbench.llm import LLM, Deferred, LLMError, ask
from workbench.store import Checkpoint, Workbench, WorkbenchError

CANDIDATES = "candidates.json"
DECISIONS = "decisions.json"
ATTEMPTS = "attempts.json"
PROPOSE_TEMPLATE = "propose_v1"
GUARD_TEMPLATE = "guard_v1"


class State(StrEnum):
    """Where a candidate question stands."""

    IN_REVIEW = "in_review"
    ACCEPTED = "accepted"
    DISCARDED = "discarded"
    ENTERED = "entered"
    GUARD_REJECTED = "guard_rejected"
    NOT_SELECTED = "not_selected"


#: States after which an image needs new candidates if no candidate of it is in another state.
_DEAD = {State.DISCARDED, State.GUARD_REJECTED, State.NOT_SELECTED}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProposedQuestion(_Model):
    """One candidate: the multimodal form and the text-only form naming the entity."""

    question: NonEmpty
    text_only_question: NonEmpty


class Proposal(_Model):
    """The propose step's structured output."""

    questions: list[ProposedQuestion] = Field(min_length=1)


class GuardCheck(_Model):
    """The guard's finding on one candidate."""

    candidate_id: str
    passes: bool
    failed_requirement: str | None = None
    boilerplate: bool


class GuardReply(_Model):
    """The guard step's structured output."""

    checks: list[GuardCheck]
    selected: str | None
    new_candidates: list[ProposedQuestion] = Field(default_factory=list)


class Decision(_Model):
    """One annotator's decision on one candidate in one round (a decisions file's line)."""

    candidate_id: str
    round: int = Field(ge=1)
    annotator: NonEmpty
    role: Literal["review", "adjudication"]
    decision: Literal["accept", "revise", "discard"]
    question: NonEmpty | None = None
    text_only_question: NonEmpty | None = None


def _images(wb: Workbench) -> dict[str, dict[str, Any]]:
    images: dict[str, dict[str, Any]] | None = wb.read(IMAGES)
    if not images:
        raise WorkbenchError(
            "no images in the workbench: run `gamut-workbench build images MANIFEST` first"
        )
    return images


def needs_proposals(images: dict[str, Any], cands: dict[str, dict[str, Any]]) -> list[str]:
    """Images with no candidate alive (none yet, or all discarded or rejected by the guard)."""
    alive = {c["image_id"] for c in cands.values() if State(c["state"]) not in _DEAD}
    return [i for i in sorted(images) if i not in alive]


def _state(wb: Workbench) -> tuple[dict[str, Any], dict[str, dict[str, int]], Checkpoint]:
    """The candidates and attempts, and a checkpoint that saves both."""
    cands: dict[str, Any] = wb.read(CANDIDATES, {})
    attempts: dict[str, dict[str, int]] = wb.read(ATTEMPTS, {})
    return (
        cands,
        attempts,
        Checkpoint(lambda: [wb.write(CANDIDATES, cands), wb.write(ATTEMPTS, attempts)]),
    )


def _by_image(cands: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for cid, c in cands.items():
        out[c["image_id"]].append(cid)
    return out


def _add(
    cands: dict[str, Any],
    mine: list[str],
    image_id: str,
    q: ProposedQuestion,
    rnd: int,
    source: str,
) -> None:
    cid = f"{image_id}.c{len(mine) + 1}"
    mine.append(cid)
    cands[cid] = {
        "image_id": image_id,
        "question": q.question,
        "text_only_question": q.text_only_question,
        "round": rnd,
        "state": State.IN_REVIEW.value,
        "source": source,
        "history": [],
    }


def propose(wb: Workbench, llm: LLM, per_image: int) -> list[str]:
    """Ask for ``per_image`` candidates for every image that needs them; the images done."""
    images = _images(wb)
    cands, attempts, cp = _state(wb)
    done = []
    by_image = _by_image(cands)
    for image_id in needs_proposals(images, cands):
        img = images[image_id]
        n = attempts.setdefault("propose", {}).get(image_id, 0) + 1
        mine = by_image[image_id]
        tried = [cands[c]["question"] for c in mine]
        try:
            reply = ask(
                llm,
                PROPOSE_TEMPLATE,
                f"{image_id}#{n}",
                {
                    "k": str(per_image),
                    "domain": img["domain"],
                    "entity": img["entity"],
                    "avoid": "\n".join(f"- {t}" for t in tried) or "(none)",
                },
                Proposal,
                image=Path(img["path"]),
            )
        except Deferred:
            continue  # batch mode: in a batch; the next run collects it
        rnd = 1 + max((cands[c]["round"] for c in mine), default=0)
        for q in reply.questions[:per_image]:
            _add(cands, mine, image_id, q, rnd, f"propose#{n}")
        attempts["propose"][image_id] = n
        done.append(image_id)
        cp.touch()
    cp.flush()
    return done


def read_decisions(
    path: Path, cands: dict[str, dict[str, Any]]
) -> list[tuple[int | None, Decision]]:
    """The decisions in a JSON Lines file, checked against the candidates; every problem at once."""
    data = read_jsonl(path, str(path), "each line: a decision object (see Decision)")
    problems = list(data.problems)
    out = []
    for line, d in validated(data.lines, Decision.model_validate, str(path), "fix it", problems):
        c = cands.get(d.candidate_id)
        if c is None:
            problem = (f"unknown candidate {d.candidate_id}", "check the id")
        elif d.round != c["round"]:
            problem = (
                f"{d.candidate_id} is in round {c['round']}, not {d.round}",
                "decide on the candidate's current round",
            )
        elif d.decision == "revise" and d.question is None and d.text_only_question is None:
            problem = ("revise without edited text", "give question")
        else:
            out.append((line, d))
            continue
        problems.append(Problem(str(path), line, *problem))
    if problems:
        raise ProblemsError(problems, f"invalid decisions file {path}")
    return out


def apply_decisions(wb: Workbench, path: Path) -> Counter[str]:
    """Record the decisions in ``path`` and settle every decided round (:func:`settle`): counts
    of outcomes and of candidates ``awaiting`` a review or an adjudication."""
    cands: dict[str, dict[str, Any]] = wb.read(CANDIDATES, {})
    return settle(wb, cands, read_decisions(path, cands), str(path))


def settle(
    wb: Workbench,
    cands: dict[str, dict[str, Any]],
    new: Sequence[tuple[int | None, Decision]],
    display: str,
) -> Counter[str]:
    """Record checked decisions (``new``: line, decision) and settle every decided round; as
    :func:`apply_decisions`, whose problems name ``display``."""
    stored: list[dict[str, Any]] = wb.read(DECISIONS, [])
    known = {(d["candidate_id"], d["round"], d["annotator"]) for d in stored}
    problems = []
    for line, d in new:
        key = (d.candidate_id, d.round, d.annotator)
        if key in known:
            problems.append(
                Problem(
                    display,
                    line,
                    f"{d.annotator} already decided {d.candidate_id} in round {d.round}",
                    "each annotator decides a candidate once a round; a third annotator, "
                    "not a reviewer, adjudicates",
                )
            )
            continue
        known.add(key)
        stored.append(d.model_dump(mode="json"))
    by_round: dict[tuple[str, int], list[Decision]] = defaultdict(list)
    for raw in stored:
        d = Decision.model_validate(raw)
        by_round[(d.candidate_id, d.round)].append(d)
    for (cid, rnd), ds in by_round.items():
        reviewers = {d.annotator for d in ds if d.role == "review"}
        if len(reviewers) > 2:
            problems.append(
                Problem(display, None, f"{cid} round {rnd}: three reviewers", "two review")
            )
    if problems:
        raise ProblemsError(problems, f"invalid decisions file {display}")
    wb.write(DECISIONS, stored)
    counts: Counter[str] = Counter()
    for cid, c in cands.items():
        if c["state"] != State.IN_REVIEW:
            continue
        ds = by_round.get((cid, c["round"]), [])
        reviews = [d for d in ds if d.role == "review"]
        adjudication = next((d for d in ds if d.role == "adjudication"), None)
        if len(reviews) < 2:
            counts["awaiting"] += 1
            continue
        same = len({(r.decision, r.question, r.text_only_question) for r in reviews}) == 1
        outcome = reviews[0] if same else adjudication
        if outcome is None:
            counts["awaiting"] += 1
            continue
        counts[outcome.decision] += 1
        c["history"].append({"round": c["round"], "outcome": outcome.decision})
        if outcome.decision == "accept":
            c["state"] = State.ACCEPTED.value
        elif outcome.decision == "discard":
            c["state"] = State.DISCARDED.value
        else:
            c["question"] = outcome.question or c["question"]
            c["text_only_question"] = outcome.text_only_question or c["text_only_question"]
            c["round"] += 1
    wb.write(CANDIDATES, cands)
    return counts


def guard(wb: Workbench, llm: LLM) -> Counter[str]:
    """The second LLM pass over every image whose candidates are settled and some accepted:
    counts of images ``entered``, ``reseeded`` (new candidates) and ``rejected`` (proposed anew)."""
    images = _images(wb)
    cands, attempts, cp = _state(wb)
    per_image = _by_image(cands)
    counts: Counter[str] = Counter()
    for image_id in sorted(per_image):
        states = {State(cands[c]["state"]) for c in per_image[image_id]}
        if State.ACCEPTED not in states or states & {State.IN_REVIEW, State.ENTERED}:
            continue
        accepted = [c for c in per_image[image_id] if cands[c]["state"] == State.ACCEPTED]
        img = images[image_id]
        n = attempts.setdefault("guard", {}).get(image_id, 0) + 1
        try:
            reply = ask(
                llm,
                GUARD_TEMPLATE,
                f"{image_id}#{n}",
                {
                    "domain": img["domain"],
                    "entity": img["entity"],
                    "candidates": "\n".join(f"{c}: {cands[c]['question']}" for c in accepted),
                },
                GuardReply,
                image=Path(img["path"]),
            )
        except Deferred:
            counts["waiting"] += 1  # batch mode: in a batch; the next run collects it
            continue
        found = {g.candidate_id: g for g in reply.checks}
        if set(found) != set(accepted):
            raise LLMError(
                f"{GUARD_TEMPLATE} reply for {image_id}#{n}: checks name {sorted(found)}, "
                f"not the accepted candidates {accepted} (record a reply that checks each)"
            )
        if reply.selected is not None and not (
            reply.selected in found and found[reply.selected].passes
        ):
            raise LLMError(
                f"{GUARD_TEMPLATE} reply for {image_id}#{n}: selected {reply.selected} is not a "
                "passing candidate"
            )
        for cid in accepted:
            g = found[cid]
            cands[cid]["guard"] = g.model_dump(mode="json")
            if cid == reply.selected:
                cands[cid]["state"] = State.ENTERED.value
            else:
                rejected = State.GUARD_REJECTED if not g.passes else State.NOT_SELECTED
                cands[cid]["state"] = rejected.value
        if reply.selected is not None:
            counts["entered"] += 1
        elif reply.new_candidates:
            rnd = 1 + max(cands[c]["round"] for c in per_image[image_id])
            for q in reply.new_candidates:
                _add(cands, per_image[image_id], image_id, q, rnd, f"guard#{n}")
            counts["reseeded"] += 1
        else:
            counts["rejected"] += 1
        attempts["guard"][image_id] = n
        cp.touch()
    cp.flush()
    return counts


def entered_questions(wb: Workbench) -> list[dict[str, Any]]:
    """The questions file's rows (docs/contract.md §1) of the entered candidates, by id."""
    images: dict[str, dict[str, Any]] = wb.read(IMAGES, {})
    cands: dict[str, dict[str, Any]] = wb.read(CANDIDATES, {})
    rows = []
    for c in cands.values():
        if c["state"] != State.ENTERED:
            continue
        img = images[c["image_id"]]
        rows.append(
            {
                "question_id": img["question_id"],
                "image_id": c["image_id"],
                "image": Path(img["file"]).as_posix(),
                "domain": img["domain"],
                "popularity": img["popularity"],
                "egocentric": img["egocentric"],
                "question": c["question"],
                "text_only_question": c["text_only_question"],
            }
        )
    return sorted(rows, key=lambda r: r["question_id"])


def opening(text: str, n: int = 3) -> str:
    """A question's template: its first ``n`` words, lower-cased."""
    return " ".join(text.lower().split()[:n])


def diversity(wb: Workbench, top: int = 5) -> dict[str, dict[str, Any]]:
    """Per domain: the most common openings among the annotators' accepted questions and among
    those the guard selected, and the share of distinct openings in each (the guard's spread)."""
    images: dict[str, dict[str, Any]] = wb.read(IMAGES, {})
    cands: dict[str, dict[str, Any]] = wb.read(CANDIDATES, {})
    accepted = {State.ACCEPTED, State.ENTERED, State.NOT_SELECTED, State.GUARD_REJECTED}
    out: dict[str, dict[str, Any]] = {}
    for domain in sorted({i["domain"] for i in images.values()}):
        mine = [c for c in cands.values() if images[c["image_id"]]["domain"] == domain]
        before = Counter(opening(c["question"]) for c in mine if State(c["state"]) in accepted)
        after = Counter(opening(c["question"]) for c in mine if c["state"] == State.ENTERED)
        out[domain] = {
            "accepted": before.most_common(top),
            "selected": after.most_common(top),
            "distinct_accepted": len(before) / max(1, sum(before.values())),
            "distinct_selected": len(after) / max(1, sum(after.values())),
        }
    return out
