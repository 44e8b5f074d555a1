"""``gamut-workbench build revise serve --annotator ID``: the revision page on 127.0.0.1 (held
text: this machine only). Each refined question's items with the checks they compile to, to edit
or delete; a save is a revision round (:func:`~workbench.revision.revise_rubrics`) and shows by
check id where the edited and recompiled checklists differ.
"""

from __future__ import annotations

import html
from http import HTTPStatus
from typing import Any

from gamut.local_server import FORM_SCRIPT, LocalServer, Reply, text
from scoring.compiler import compile_rubric
from scoring.errors import ProblemsError
from scoring.rubric import MetaRubric
from workbench.revision import REVISIONS, CheckEdit, part_value, revise_rubrics
from workbench.store import Workbench, WorkbenchError


def _questions(wb: Workbench) -> list[str]:
    folder = wb.path("rubrics")
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def render_question(wb: Workbench, qid: str, message: str = "") -> str:
    """The revision page of one question (every value escaped)."""
    e = html.escape
    raw = wb.read(f"rubrics/{qid}.json")
    checks = compile_rubric(MetaRubric.model_validate(raw))
    items = {i["id"]: i for i in raw["items"]}
    last = [r for r in wb.read(REVISIONS, []) if r["question_id"] == qid]
    rows = []
    for iid, item in items.items():
        label = item.get("topic") or item.get("entity") or item.get("text", "")
        rows.append(
            f'<h2 class="item">{e(iid)} {e(item["type"])} ({e(item["tier"])}): {e(label)}</h2>'
        )
        rows.append("<table><tr><th>check</th><th>text</th><th>edit</th><th>delete</th></tr>")
        for c in (c for c in checks if c.item_id == iid):
            value, cid = part_value(item, c.check_id), e(c.check_id)
            edit, delete = "derived: edit its parts", ""
            if value is not None:
                edit = f'<textarea name="text:{cid}">{e(value)}</textarea>'
                delete = f'<input type="checkbox" name="delete:{cid}">'
            rows.append(
                f'<tr data-check="{e(c.check_id)}"><td>{e(c.check_id)}</td><td>{e(c.text)}</td>'
                f"<td>{edit}</td><td>{delete}</td></tr>"
            )
        rows.append("</table>")
    diff = ""
    if last:
        d = last[-1]["differences"]
        diff = (
            f'<section id="differences"><h2>After round {last[-1]["round"]}: '
            f"{len(d)} check(s) differ from the edited checklist</h2><ul>"
            + "".join(f"<li>{e(x['check_id'])}: {e(x['difference'])}</li>" for x in d)
            + "</ul></section>"
        )
    note = f'<p id="message" role="status">{e(message)}</p>' if message else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>GAMUT revision: {e(qid)}</title>{FORM_SCRIPT}</head>"
        f"<body><h1>{e(qid)}</h1>{note}{diff}"
        f'<form method="post">{"".join(rows)}'
        '<button type="submit">Save this round</button></form></body></html>'
    )


def make_revise_server(wb: Workbench, annotator: str, port: int = 8002) -> LocalServer:
    """The revision page's server (port 0 picks a free port; ``url`` opens the page)."""

    def get(path: str, query: dict[str, str]) -> Reply:
        qids = _questions(wb)
        if path == "/":
            e = html.escape
            links = "".join(f'<li><a href="q/{e(q)}">{e(q)}</a></li>' for q in qids)
            return Reply(f"<!doctype html><title>GAMUT revision</title><ul>{links}</ul>")
        if path.startswith("/q/") and path[3:] in qids:
            return Reply(render_question(wb, path[3:], query.get("m", "")))
        return text(HTTPStatus.NOT_FOUND, "not found")

    def post(path: str, body: Any) -> Reply:
        qid = path[3:]
        if not path.startswith("/q/") or qid not in _questions(wb) or not isinstance(body, dict):
            return text(HTTPStatus.NOT_FOUND, "not found: post a question's form")
        return text(HTTPStatus.OK, _save(wb, annotator, qid, body))

    return LocalServer(get, post, port)


def _save(wb: Workbench, annotator: str, qid: str, form: dict[str, Any]) -> str:
    """Record the edits of one posted form as a revision round; the page's message."""
    items = {i["id"]: i for i in wb.read(f"rubrics/{qid}.json")["items"]}
    edits = []
    for key, value in form.items():
        kind, _, cid = key.partition(":")
        item = items.get(cid.split(".")[0])
        if item is None:
            continue
        if kind == "delete":
            edits.append(CheckEdit(question_id=qid, check_id=cid, delete=True))
        elif kind == "text" and f"delete:{cid}" not in form:
            new = str(value).strip()
            if new and new != part_value(item, cid):
                edits.append(CheckEdit(question_id=qid, check_id=cid, text=new))
    try:
        if not edits:
            raise WorkbenchError("nothing changed")
        who = f"revision page of {annotator}"
        c = revise_rubrics(wb, {qid: [(None, x) for x in edits]}, who, annotator)
    except (ProblemsError, WorkbenchError) as exc:
        return f"not saved: {str(exc).splitlines()[-1].strip()}"
    return f"saved: {c['edits']} edit(s), {c['differences']} check(s) differ"
