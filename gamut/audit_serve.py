"""``gamut audit serve``: a local annotation page for a maintainer who holds the rubrics.

Served by :mod:`gamut.local_server` (this machine's page only), never part of the public site. The
page shows each drawn response (its image, question in the setting's form, the response) and every
check with the four verdict buttons (keys 1-4, ``n``/``p`` for the next or previous response); each
click appends one line to the annotator's label file ``<audit>/<annotator>.jsonl`` (rewritten
atomically), so a session resumes where it stopped. Labels by other annotators are never sent to
the page (blind labelling). With ``adjudicate``, the items are the (response, check) cells whose
annotators disagree without an adjudication, shown with each annotator's verdict, and a click
records an adjudication.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

from gamut.local_server import LocalServer, Reply, image, text
from gamut.project import Project
from scoring.audit_line import AuditLine, Role
from scoring.errors import GamutError
from scoring.questions import Setting
from scoring.storage import atomic_write_text
from scoring.submissions.jsonl import JsonlLimits, dumps_line, read_jsonl
from scoring.submissions.responses import read_responses
from scoring.verdicts import PAIR_KEY


class AuditServeError(GamutError):
    """The annotation page cannot start (no audit folder configured, no sample given)."""


@dataclass
class Session:
    """What the page works on: the items, and the annotator's own labels so far."""

    project: Project
    annotator: str
    items: list[dict[str, Any]]
    adjudicate: bool
    file: Path

    def _labels(self) -> dict[str, Any]:
        """The annotator's label lines so far, by ``submission|setting|question|check``."""
        values = _lines(self.file) if self.file.is_file() else []
        return {"|".join(str(v.get(k)) for k in PAIR_KEY): v for v in values}

    def own(self) -> dict[str, str]:
        """The annotator's verdicts so far, by ``submission|setting|question|check``."""
        return {key: str(v.get("verdict")) for key, v in self._labels().items()}

    def record(self, body: dict[str, Any]) -> None:
        """Write one label (validated) to the annotator's file, in place of any earlier label of
        the same check (moved last), atomically; the server makes one call at a time."""
        role = Role.ADJUDICATION if self.adjudicate else Role.LABEL
        fields = {**{k: body[k] for k in PAIR_KEY}, "verdict": body["verdict"], "role": role}
        line = AuditLine.model_validate({**fields, "annotator": self.annotator})
        labels, key = self._labels(), "|".join(str(body[k]) for k in PAIR_KEY)
        labels.pop(key, None)
        labels[key] = line.model_dump(mode="json", exclude_none=True)
        atomic_write_text(self.file, "".join(dumps_line(v) + "\n" for v in labels.values()))


def _lines(file: Path) -> list[dict[str, Any]]:
    """The label lines of one file (objects only)."""
    read = read_jsonl(file, str(file), "", JsonlLimits(64 << 20, 16 << 10))
    return [x.value for x in read.lines if isinstance(x.value, dict)]


def _items(project: Project, drawn: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The page's items: one per drawn response, with its checks (text included: local only)."""
    questions = {q.question_id: q for q in project.questions}
    responses: dict[tuple[str, str], dict[str, str]] = {}
    out = []
    for d in drawn:
        sub, setting, qid = d["submission_id"], d["setting"], d["question_id"]
        if (sub, setting) not in responses:
            path = project.submissions.responses(sub, setting)
            responses[(sub, setting)] = read_responses(path)[0] if path.is_file() else {}
        q = questions[qid]
        out.append(
            {
                "submission_id": sub,
                "setting": setting,
                "question_id": qid,
                "question": q.prompt(Setting(setting)),
                "image": f"image/{qid}" if setting == "multimodal" and q.image else None,
                "response": responses[(sub, setting)].get(qid, ""),
                "checks": [
                    {"check_id": c.check_id, "kind": c.kind.value, "text": c.text}
                    for c in project.checks[qid]
                ],
            }
        )
    return out


def _disagreements(project: Project, labels_dir: Path) -> list[dict[str, Any]]:
    """The cells whose annotators disagree and that have no adjudication, grouped by response."""
    cells: dict[tuple[str, str, str, str], dict[str, str]] = {}
    adjudicated = set()
    for f in sorted(labels_dir.glob("*.jsonl")):
        for v in _lines(f):
            key = (v["submission_id"], v["setting"], v["question_id"], v["check_id"])
            if v.get("role") == "adjudication":
                adjudicated.add(key)
            else:
                cells.setdefault(key, {})[str(v["annotator"])] = str(v["verdict"])
    open_cells = {
        k: v for k, v in cells.items() if len(set(v.values())) > 1 and k not in adjudicated
    }
    drawn = sorted({k[:3] for k in open_cells})
    items = _items(project, [dict(zip(PAIR_KEY[:3], d, strict=True)) for d in drawn])
    for item in items:
        mine = (item["submission_id"], item["setting"], item["question_id"])
        item["checks"] = [
            {**c, "others": open_cells[(*mine, c["check_id"])]}
            for c in item["checks"]
            if (*mine, c["check_id"]) in open_cells
        ]
    return items


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>GAMUT audit</title><style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}
.check{border:1px solid #ccc;border-radius:6px;padding:.5rem;margin:.4rem 0}
.check.focus{outline:3px solid #36c}.check button[aria-pressed=true]{background:#36c;color:#fff}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.6rem;border-radius:6px}
img{max-width:24rem;max-height:18rem}</style></head><body>
<h1>GAMUT audit <small id="who"></small></h1>
<p id="progress" role="status"></p><div id="item"></div>
<p>Keys: 1 meets, 2 partially meets, 3 missing, 4 contradicts (the focused check; the focus then
moves on); j / k next or previous check; n / p next or previous response.</p>
<script>
const V = ["meets", "partially_meets", "missing", "contradicts"];
let items = [], own = {}, at = 0, focus = 0;
const key = (it, c) => [it.submission_id, it.setting, it.question_id, c.check_id].join("|");
function done(it) { return it.checks.every(c => own[key(it, c)]); }
function draw() {
  const n = items.filter(done).length;
  document.getElementById("progress").textContent =
    items.length ? `${n} of ${items.length} responses labelled; this is ${at + 1}` : "Nothing to label.";
  const box = document.getElementById("item"); box.innerHTML = "";
  if (!items.length) return;
  const it = items[at];
  const h = document.createElement("h2");
  h.textContent = `${it.submission_id} / ${it.setting} / ${it.question_id}`; box.append(h);
  if (it.image) { const i = document.createElement("img"); i.src = it.image; i.alt = "the question's image"; box.append(i); }
  const q = document.createElement("p"); q.textContent = it.question; box.append(q);
  const r = document.createElement("pre"); r.textContent = it.response; box.append(r);
  it.checks.forEach((c, ci) => {
    const d = document.createElement("div"); d.className = "check" + (ci === focus ? " focus" : "");
    d.dataset.check = c.check_id;
    const t = document.createElement("p"); t.textContent = `${c.check_id} (${c.kind}): ${c.text}`; d.append(t);
    if (c.others) { const o = document.createElement("p"); o.textContent = "Annotators: " +
      Object.entries(c.others).map(([a, v]) => `${a} ${v}`).join(", "); d.append(o); }
    V.forEach((v, vi) => { const b = document.createElement("button");
      b.textContent = `${vi + 1} ${v}`; b.dataset.verdict = v;
      b.setAttribute("aria-pressed", own[key(it, c)] === v ? "true" : "false");
      b.onclick = () => label(ci, v); d.append(b); });
    box.append(d);
  });
}
async function label(ci, v) {
  const it = items[at], c = it.checks[ci];
  const body = {submission_id: it.submission_id, setting: it.setting, question_id: it.question_id,
                check_id: c.check_id, verdict: v};
  const res = await fetch("api/label", {method: "POST", body: JSON.stringify(body), headers: {"Content-Type": "application/json"}});
  if (!res.ok) { alert(await res.text()); return; }
  own[key(it, c)] = v; focus = Math.min(ci + 1, it.checks.length - 1); draw();
}
document.addEventListener("keydown", e => {
  if (!items.length) return;
  const it = items[at];
  if ("1234".includes(e.key)) label(focus, V[+e.key - 1]);
  else if (e.key === "j") { focus = Math.min(focus + 1, it.checks.length - 1); draw(); }
  else if (e.key === "k") { focus = Math.max(focus - 1, 0); draw(); }
  else if (e.key === "n") { at = Math.min(at + 1, items.length - 1); focus = 0; draw(); }
  else if (e.key === "p") { at = Math.max(at - 1, 0); focus = 0; draw(); }
});
fetch("api/items").then(r => r.json()).then(d => {
  items = d.items; own = d.own; document.getElementById("who").textContent = d.annotator;
  const first = items.findIndex(it => !done(it)); at = first < 0 ? 0 : first; draw();
  document.body.dataset.ready = "true";
});
</script></body></html>
"""  # noqa: E501


def make_audit_server(session: Session, port: int = 0) -> LocalServer:
    """The annotation server on 127.0.0.1 (``port`` 0 picks a free one; ``url`` opens it)."""
    questions = {q.question_id: q for q in session.project.questions}
    base = session.project.questions_path.parent

    def get(path: str, query: dict[str, str]) -> Reply:
        if path == "/":
            return Reply(PAGE)
        if path == "/api/items":
            data = {"items": session.items, "own": session.own(), "annotator": session.annotator}
            return Reply(json.dumps(data), "application/json")
        q = questions.get(path[len("/image/") :]) if path.startswith("/image/") else None
        return image(base / q.image if q is not None and q.image else None)

    def post(path: str, body: Any) -> Reply:
        if path != "/api/label":
            return text(HTTPStatus.NOT_FOUND, "not found")
        try:
            session.record(body)
        except (ValueError, KeyError, TypeError) as exc:
            return text(HTTPStatus.BAD_REQUEST, f"refused: {exc}")
        return text(HTTPStatus.OK, "ok")

    return LocalServer(get, post, port)


def open_session(
    project: Project, annotator: str, sample: Path | None, adjudicate: bool
) -> Session:
    """The items of a labelling session (from the ``gamut audit sample`` file) or of an
    adjudication (the open disagreements of the audit folder)."""
    audit = project.audit_path
    if audit is None:
        raise AuditServeError("set [benchmark] audit to the folder the labels are written to")
    folder = audit if not audit.is_file() else audit.parent
    if adjudicate:
        items = _disagreements(project, folder)
    else:
        if sample is None:
            raise AuditServeError("give --sample FILE (written by gamut audit sample)")
        drawn = [line.value for line in read_jsonl(sample, str(sample), "one object a line").lines]
        items = _items(project, drawn)
    return Session(project, annotator, items, adjudicate, folder / f"{annotator}.jsonl")


__all__ = ["AuditServeError", "Session", "make_audit_server", "open_session"]
