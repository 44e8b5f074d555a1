"""``gamut-workbench build review serve --annotator ID``: the annotation page on 127.0.0.1.

It lists the candidates this annotator can decide now: to review (never showing another
annotator's decision: reviews are blind), or, for a third annotator, to adjudicate two reviews
that disagree. Each decision is settled as a decisions file's (:func:`~workbench.questions.settle`).
"""

from __future__ import annotations

import html
from http import HTTPStatus
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gamut.local_server import FORM_SCRIPT, LocalServer, Reply, image, text
from scoring.errors import ProblemsError
from workbench.images import IMAGES
from workbench.questions import CANDIDATES, DECISIONS, Decision, State, settle
from workbench.store import Workbench


def waiting(wb: Workbench, annotator: str) -> list[tuple[str, dict[str, Any], str]]:
    """(candidate id, candidate, role) for every decision ``annotator`` can make now."""
    cands: dict[str, dict[str, Any]] = wb.read(CANDIDATES, {})
    decided: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for d in wb.read(DECISIONS, []):
        decided.setdefault((d["candidate_id"], d["round"]), []).append(d)
    out = []
    for cid, c in sorted(cands.items()):
        if c["state"] != State.IN_REVIEW:
            continue
        ds = decided.get((cid, c["round"]), [])
        if any(d["annotator"] == annotator for d in ds):
            continue
        reviews = [d for d in ds if d["role"] == "review"]
        if len(reviews) < 2:
            out.append((cid, c, "review"))
        elif not any(d["role"] == "adjudication" for d in ds):
            out.append((cid, c, "adjudication"))
    return out


def render(wb: Workbench, annotator: str, message: str = "") -> str:
    """The page for ``annotator`` (every value escaped)."""
    e = html.escape
    rows = []
    for cid, c, role in waiting(wb, annotator):
        what = "Adjudicate (the two reviews disagree)" if role == "adjudication" else "Review"
        rows.append(
            f'<form method="post" action="decide" class="candidate" data-id="{e(cid)}">'
            f"<h2>{e(cid)} <small>round {c['round']}: {what}</small></h2>"
            f'<img src="image/{e(c["image_id"])}" alt="image {e(c["image_id"])}" width="320">'
            f'<p class="question">{e(c["question"])}</p>'
            f'<p class="text-only">Text-only form: {e(c["text_only_question"])}</p>'
            f'<input type="hidden" name="candidate_id" value="{e(cid)}">'
            f'<input type="hidden" name="round" value="{c["round"]}">'
            f'<input type="hidden" name="role" value="{role}">'
            + "".join(
                f'<label><input type="radio" name="decision" value="{v}" required> {v}</label> '
                for v in ("accept", "revise", "discard")
            )
            + f'<label>Revised question <textarea name="question">{e(c["question"])}'
            "</textarea></label>"
            f'<label>Revised text-only form <textarea name="text_only_question">'
            f"{e(c['text_only_question'])}</textarea></label>"
            '<button type="submit">Record</button></form>'
        )
    body = "".join(rows) or '<p id="done">Nothing waits for you.</p>'
    note = f'<p id="message" role="status">{e(message)}</p>' if message else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>GAMUT review: {e(annotator)}</title>{FORM_SCRIPT}</head><body>"
        f"<h1>Candidate questions for {e(annotator)}</h1>{note}{body}</body></html>"
    )


def make_review_server(wb: Workbench, annotator: str, port: int = 8001) -> LocalServer:
    """The review page's server (port 0 picks a free port; ``url`` opens the page)."""

    def get(path: str, query: dict[str, str]) -> Reply:
        if path == "/":
            return Reply(render(wb, annotator, query.get("m", "")))
        img = wb.read(IMAGES, {}).get(path[7:]) if path.startswith("/image/") else None
        return image(Path(img["path"]) if img else None)

    def post(path: str, body: Any) -> Reply:
        if path != "/decide" or not isinstance(body, dict):
            return text(HTTPStatus.NOT_FOUND, "not found: post a form to decide")
        drop = () if body.get("decision") == "revise" else ("question", "text_only_question")
        value = {k: v for k, v in body.items() if k not in drop} | {"annotator": annotator}
        try:
            d = Decision.model_validate(value)
            cands = wb.read(CANDIDATES, {})
            if cands.get(d.candidate_id, {}).get("round") != d.round:
                raise ValueError("the candidate moved on: reload the page")
            settle(wb, cands, [(None, d)], f"review page of {annotator}")
            message = f"recorded: {d.decision} {d.candidate_id}"
        except (ValidationError, ProblemsError, ValueError) as exc:
            message = f"not recorded: {str(exc).splitlines()[0]}"
        return text(HTTPStatus.OK, message)

    return LocalServer(get, post, port)
