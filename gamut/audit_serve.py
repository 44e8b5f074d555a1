"""``gamut audit serve``: a local annotation page (never part of the public site) writing each
label to ``<audit>/<annotator>.jsonl`` atomically, so a session resumes where it stopped.

The page is blind: it never receives the submission or other annotators' labels; responses are
opaque references (``R1``, ...) in an order shuffled per annotator, so neighbours do not betray a
common model. With ``adjudicate``, the items are the open disagreements, with each verdict.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any

from gamut.local_server import LocalServer, Reply, image, text
from gamut.project import Project
from scoring.audit_line import AuditLine, Role
from scoring.errors import GamutError
from scoring.jsonl import JsonlLimits, dumps_line, read_jsonl
from scoring.questions import Setting
from scoring.storage import atomic_write_text
from scoring.submissions.responses import read_responses
from scoring.verdicts import PAIR_KEY

#: What of an item identifies the response to the label file but is never sent to the page.
HIDDEN = "submission_id"


@dataclass
class Session:
    """What the page works on: the items (``R<n>`` is the n-th) and the annotator's file."""

    project: Project
    annotator: str
    items: list[dict[str, Any]]
    adjudicate: bool
    file: Path

    def _labels(self) -> dict[str, Any]:
        """The annotator's label lines so far, by ``submission|setting|question|check``."""
        values = _lines(self.file) if self.file.is_file() else []
        return {"|".join(str(v.get(k)) for k in PAIR_KEY): v for v in values}

    def page_items(self) -> list[dict[str, Any]]:
        """The items as the page sees them: each with its reference, without its submission."""
        return [
            {"ref": f"R{n}", **{k: v for k, v in it.items() if k != HIDDEN}}
            for n, it in enumerate(self.items, 1)
        ]

    def own(self) -> dict[str, dict[str, str]]:
        """The annotator's labels of this session's checks, by ``ref|check`` (no others: they
        would name their responses)."""
        labels = self._labels()
        out = {}
        for n, it in enumerate(self.items, 1):
            for c in it["checks"]:
                line = labels.get("|".join([*(it[k] for k in PAIR_KEY[:3]), c["check_id"]]))
                if line is not None:
                    kept = {k: str(line[k]) for k in ("verdict", "note") if k in line}
                    out[f"R{n}|{c['check_id']}"] = kept
        return out

    def record(self, body: dict[str, Any]) -> None:
        """Write one validated label in place of any earlier one of the same check (moved
        last), or remove it when ``verdict`` is null (an undo); KeyError/ValueError if bad."""
        item = _by_ref(self.items, body["ref"])
        if body["check_id"] not in {c["check_id"] for c in item["checks"]}:
            raise KeyError(f"{body['ref']} has no check {body['check_id']!r} to label")
        pair = {**{k: item[k] for k in PAIR_KEY[:3]}, "check_id": body["check_id"]}
        labels, key = self._labels(), "|".join(str(pair[k]) for k in PAIR_KEY)
        labels.pop(key, None)
        if body["verdict"] is not None:
            role = Role.ADJUDICATION if self.adjudicate else Role.LABEL
            fields = {
                **pair,
                "verdict": body["verdict"],
                "role": role,
                "note": body.get("note") or None,
            }
            line = AuditLine.model_validate({**fields, "annotator": self.annotator})
            labels[key] = line.model_dump(mode="json", exclude_none=True)
        atomic_write_text(self.file, "".join(dumps_line(v) + "\n" for v in labels.values()))


def _by_ref(items: list[dict[str, Any]], ref: Any) -> dict[str, Any]:
    """The item a page reference (``R<n>``) names."""
    n = ref[1:] if isinstance(ref, str) and ref.startswith("R") else ""
    if not (n.isascii() and n.isdigit() and 1 <= int(n) <= len(items)):
        raise KeyError(f"no response {ref!r} in this session")
    return items[int(n) - 1]


def _lines(file: Path) -> list[dict[str, Any]]:
    """The label lines of one file (objects only)."""
    read = read_jsonl(file, str(file), "", JsonlLimits(64 << 20, 16 << 10))
    return [x.value for x in read.lines if isinstance(x.value, dict)]


def _blind_order(items: list[dict[str, Any]], annotator: str) -> list[dict[str, Any]]:
    """The items ordered by a hash of the annotator and the response (stable per annotator)."""

    def rank(it: dict[str, Any]) -> str:
        ids = "\0".join([annotator, *(str(it[k]) for k in PAIR_KEY[:3])])
        return hashlib.sha256(ids.encode()).hexdigest()

    return sorted(items, key=rank)


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
                    {
                        "check_id": c.check_id,
                        "kind": c.kind.value,
                        "tier": c.tier.value,
                        "text": c.text,
                    }
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


def make_audit_server(session: Session, port: int = 0) -> LocalServer:
    """The annotation server on 127.0.0.1 (``port`` 0 picks a free one; ``url`` opens it)."""
    questions = {q.question_id: q for q in session.project.questions}
    base = session.project.questions_path.parent
    page = resources.files("gamut").joinpath("audit_page.html").read_text(encoding="utf-8")

    def get(path: str, query: dict[str, str]) -> Reply:
        if path == "/":
            return Reply(page)
        if path == "/api/items":
            data = {
                "items": session.page_items(),
                "own": session.own(),
                "annotator": session.annotator,
                "adjudicate": session.adjudicate,
            }
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
    """The items of a labelling session (a ``gamut audit sample`` file) or of an adjudication,
    in the page's blind order."""
    audit = project.audit_path
    if audit is None:
        raise GamutError("set [benchmark] audit to the folder the labels are written to")
    folder = audit if not audit.is_file() else audit.parent
    if adjudicate:
        items = _disagreements(project, folder)
    else:
        if sample is None:
            raise GamutError("give --sample FILE (written by gamut audit sample)")
        drawn = [line.value for line in read_jsonl(sample, str(sample), "one object a line").lines]
        items = _items(project, drawn)
    items = _blind_order(items, annotator)
    return Session(project, annotator, items, adjudicate, folder / f"{annotator}.jsonl")
