"""``gamut build revise serve --annotator ID``: human revision of the compiled checks on
127.0.0.1.

For each refined question the page shows the meta-rubric's items and, under each, the checks it
compiles to; the annotator edits what a check asks for (or deletes it) and saves. The tool maps
each edit back to its item (:func:`gamut.workbench.revision.revise_rubrics`), recompiles, records
the round and shows, by check id, where the edited checklist and the recompiled one differ. The
page holds held text: it listens on 127.0.0.1 only and refuses a form from another origin.
"""

from __future__ import annotations

import html
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gamut.workbench.revision import REVISIONS, CheckEdit, part_value, revise_rubrics
from gamut.workbench.store import Workbench, WorkbenchError
from scoring.compiler import compile_rubric
from scoring.errors import ProblemsError
from scoring.rubric import MetaRubric


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
            value = part_value(item, c.check_id)
            edit = (
                f'<textarea name="text:{e(c.check_id)}">{e(value)}</textarea>'
                if value is not None
                else "derived: edit its parts"
            )
            delete = (
                f'<input type="checkbox" name="delete:{e(c.check_id)}">'
                if value is not None
                else ""
            )
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
        f"<title>GAMUT revision: {e(qid)}</title></head><body><h1>{e(qid)}</h1>{note}{diff}"
        f'<form method="post" action="/q/{e(qid)}">{"".join(rows)}'
        '<button type="submit">Save this round</button></form></body></html>'
    )


def make_revise_server(
    wb: Workbench, annotator: str, host: str = "127.0.0.1", port: int = 8002
) -> ThreadingHTTPServer:
    """The revision page's server (port 0 picks a free port)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, code: int, body: str) -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urllib.parse.urlparse(self.path)
            qids = _questions(wb)
            if url.path == "/":
                links = "".join(f'<li><a href="/q/{q}">{html.escape(q)}</a></li>' for q in qids)
                self._send(
                    HTTPStatus.OK, f"<!doctype html><title>GAMUT revision</title><ul>{links}</ul>"
                )
            elif url.path.startswith("/q/") and url.path[3:] in qids:
                message = urllib.parse.parse_qs(url.query).get("m", [""])[0]
                with lock:
                    self._send(HTTPStatus.OK, render_question(wb, url.path[3:], message))
            else:
                self._send(HTTPStatus.NOT_FOUND, "not found")

        def do_POST(self) -> None:
            url = urllib.parse.urlparse(self.path)
            qid = url.path[3:]
            origin = self.headers.get("Origin")
            here = f"http://{self.headers.get('Host')}"
            if (
                not url.path.startswith("/q/")
                or qid not in _questions(wb)
                or origin not in (None, here)
            ):
                self._send(HTTPStatus.FORBIDDEN, "refused")
                return
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(
                self.rfile.read(min(length, 1 << 22)).decode(), keep_blank_values=True
            )
            with lock:
                raw = wb.read(f"rubrics/{qid}.json")
                items = {i["id"]: i for i in raw["items"]}
                edits = []
                for key, values in form.items():
                    kind, _, cid = key.partition(":")
                    item = items.get(cid.split(".")[0])
                    if item is None:
                        continue
                    if kind == "delete":
                        edits.append(CheckEdit(question_id=qid, check_id=cid, delete=True))
                    elif kind == "text" and f"delete:{cid}" not in form:
                        new = values[0].strip()
                        if new and new != part_value(item, cid):
                            edits.append(CheckEdit(question_id=qid, check_id=cid, text=new))
                try:
                    if not edits:
                        raise WorkbenchError("nothing changed")
                    c = revise_rubrics(
                        wb,
                        {qid: [(None, x) for x in edits]},
                        f"revision page of {annotator}",
                        annotator,
                    )
                    message = f"saved: {c['edits']} edit(s), {c['differences']} check(s) differ"
                except (ProblemsError, WorkbenchError) as exc:
                    message = f"not saved: {str(exc).splitlines()[-1].strip()}"
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", f"/q/{qid}?" + urllib.parse.urlencode({"m": message}))
            self.send_header("Content-Length", "0")
            self.end_headers()

    return ThreadingHTTPServer((host, port), Handler)


__all__ = ["make_revise_server", "render_question"]
