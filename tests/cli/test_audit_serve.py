"""``gamut audit serve`` in a real headless Chromium: labels by keyboard go to the annotator's
file, a session resumes, other annotators' verdicts stay hidden, and adjudication lists the open
disagreements."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gamut.audit_serve import make_audit_server, open_session
from gamut.config import load_config
from gamut.project import Project
from generator.serve import make_server
from tests.tables.project import CHECKS
from tests.tables.test_audit import LINES, audited_project

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync",
        "--host-resolver-rules=MAP rebound.test 127.0.0.1"]  # fmt: skip


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser-deps` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=str(CHROMIUM),
            headless=True, args=ARGS,
        )  # fmt: skip
        yield ctx.new_page()
        ctx.close()


def _serve(project: Project, annotator: str, sample: Path | None, adjudicate: bool) -> tuple:
    session = open_session(project, annotator, sample, adjudicate)
    server = make_audit_server(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, session, server.url


def _lines(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


FOCUS = """() => {
  const c = document.querySelector(".check.focus"), r = c.getBoundingClientRect();
  const bar = document.getElementById("bar").getBoundingClientRect();
  return [c.dataset.check, r.top >= bar.bottom - 1 && r.bottom <= innerHeight + 1];
}"""
PRESSED = "document.querySelectorAll('button[aria-pressed=true]').length"


def _sample(tmp_path: Path, drawn: list[tuple[str, str, str]]) -> Path:
    keys = ("submission_id", "setting", "question_id")
    sample = tmp_path / "draw.jsonl"
    sample.write_text("".join(json.dumps(dict(zip(keys, d, strict=True))) + "\n" for d in drawn))
    return sample


def _ready(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready]")


def _label(session: Any, ref: str, check: str) -> dict[str, str] | None:
    """The annotator's file's line for the check of the response the page calls ``ref``."""
    item = session.items[int(ref[1:]) - 1]
    ids = (item["submission_id"], item["setting"], item["question_id"], check)
    got = [
        x
        for x in _lines(session.file)
        if (x["submission_id"], x["setting"], x["question_id"], x["check_id"]) == ids
    ]
    return got[0] if got else None


def test_keyboard_play_through_resumes_relabels_undoes_and_notes(page: Any, tmp_path: Path) -> None:
    project = Project(load_config(audited_project(tmp_path / "p", LINES)))
    drawn = [("beta", "text_only", "food-1"), ("beta", "text_only", "plant-3"),
             ("alpha", "multimodal", "food-2")]  # fmt: skip
    server, session, url = _serve(project, "ann-x", _sample(tmp_path, drawn), False)
    r1, r2 = ([c["check_id"] for c in it["checks"]] for it in session.items[:2])
    total = sum(len(CHECKS[d[2]]) for d in drawn)
    progress = f"Overall: {{}} / {total} checks labelled; {{}} / 3 responses complete."
    try:
        page.set_viewport_size({"width": 800, "height": 420})
        _ready(page, url)
        assert page.inner_text("#progress") == progress.format(0, 0)
        assert f"This response: 0 / {len(r1)} checks" in page.inner_text("#here")
        # keys 1-4 label R1's checks in order; the focus moves on and is kept in view
        keys = "1324" * 2
        assert page.evaluate(FOCUS) == [r1[0], True]
        for i in range(len(r1)):
            page.keyboard.press(keys[i])
            page.wait_for_function(f"{PRESSED} == {i + 1}")
            assert page.evaluate(FOCUS) == [r1[min(i + 1, len(r1) - 1)], True]
        verdicts = ["meets", "missing", "partially_meets", "contradicts"] * 2
        assert [(x["check_id"], x["verdict"]) for x in _lines(session.file)] == list(
            zip(r1, verdicts, strict=False)
        )
        assert page.inner_text("#progress") == progress.format(len(r1), 1)
        # R2: skip its first check (j), label the second; a reload resumes at the skipped one
        for key in "nj1":
            page.keyboard.press(key)
        page.wait_for_function(f"{PRESSED} == 1")
        assert page.inner_text("#progress") == progress.format(len(r1) + 1, 1)
        assert f"This response: 1 / {len(r2)} checks" in page.inner_text("#here")
        page.reload()
        page.wait_for_selector("body[data-ready]")
        assert page.evaluate(FOCUS) == [r2[0], True]
        assert "Response R2" in page.inner_text("h2")
        # relabel R2's second check: the previous verdict is shown, and u restores it
        page.keyboard.press("j")
        page.keyboard.press("3")
        was = f".check[data-check='{r2[1]}'] .was"
        page.wait_for_selector(was)
        assert page.inner_text(was) == "was: Meets"
        assert _label(session, "R2", r2[1])["verdict"] == "missing"
        page.keyboard.press("u")
        page.wait_for_selector(was, state="detached")
        assert _label(session, "R2", r2[1])["verdict"] == "meets"
        # undo of a first label removes it
        page.keyboard.press("k")
        page.keyboard.press("4")
        page.wait_for_function(f"{PRESSED} == 2")
        assert _label(session, "R2", r2[0])["verdict"] == "contradicts"
        page.click("#undo")
        page.wait_for_function(f"{PRESSED} == 1")
        assert _label(session, "R2", r2[0]) is None
        assert page.inner_text("#progress") == progress.format(len(r1) + 1, 1)
        # a note is saved with the label, and a changed note of a labelled check is saved too
        first = f".check[data-check='{r2[0]}']"
        page.fill(f"{first} .note", "hedges between two trees")
        page.click(f"{first} button[data-verdict=partially_meets]")
        page.wait_for_function(f"{PRESSED} == 2")
        line = _label(session, "R2", r2[0])
        assert line is not None and (line["verdict"], line["note"]) == (
            "partially_meets", "hedges between two trees")  # fmt: skip
        page.fill(f"{first} .note", "names the genus only")
        page.press(f"{first} .note", "Enter")
        page.wait_for_function("() => !document.querySelector('.note:focus')")
        page.wait_for_function(f"{PRESSED} == 2")
        server_note = page.evaluate("fetch('api/items').then(r => r.json())")["own"]
        assert server_note[f"R2|{r2[0]}"] == {
            "verdict": "partially_meets",
            "note": "names the genus only",
        }
        assert _label(session, "R2", r2[0])["note"] == "names the genus only"
        done = len(r1) + 2
        assert page.inner_text("#progress") == progress.format(done, 1 + (len(r2) == 2))
    finally:
        server.shutdown()
        server.server_close()


def test_the_page_is_blind_and_speaks_words(page: Any, tmp_path: Path) -> None:
    project = Project(load_config(audited_project(tmp_path / "p", LINES)))
    drawn = [("beta", "text_only", "food-2"), ("alpha", "multimodal", "plant-3")]
    server, session, url = _serve(project, "ann-x", _sample(tmp_path, drawn), False)
    names = ("alpha", "beta", "acme", "bolt")  # submission ids, model names, families
    try:
        page.set_viewport_size({"width": 1280, "height": 800})
        _ready(page, url)
        page.keyboard.press("2")
        page.wait_for_function(f"{PRESSED} == 1")
        assert _lines(session.file)[0]["verdict"] == "partially_meets"
        for path in ("", "api/items"):
            got = page.evaluate(f"fetch('{path}').then(r => r.text())").lower()
            assert not [n for n in names if n in got], path
        # other annotators (a1, a2 labelled alpha's plant-3) are hidden too
        items = page.evaluate("fetch('api/items').then(r => r.json())")
        assert [i["ref"] for i in items["items"]] == ["R1", "R2"]
        assert '"a1"' not in json.dumps(items) and '"a2"' not in json.dumps(items)
        assert list(items["own"]) == [f"R1|{session.items[0]['checks'][0]['check_id']}"]
        shown = page.inner_text("body")
        assert not [n for n in names if n in shown.lower()]
        assert "Annotators" not in shown and "partially_meets" not in shown
        assert "answer_critical" not in shown and "Answer-critical" in shown
        for word in ("1 Meets", "2 Partially meets", "3 Missing", "4 Contradicts"):
            assert word in page.inner_text(".check")
        assert "Silence is Missing, never Contradicts" in shown
        # a post naming a response the session does not hold, or a check it lacks, is refused
        post = """b => fetch('api/label', {method: 'POST', body: JSON.stringify(b),
                    headers: {'Content-Type': 'application/json'}}).then(r => r.status)"""
        ids = dict(zip(("submission_id", "setting", "question_id"), drawn[0], strict=True))
        for bad in ({"ref": "R3", "check_id": "I1", "verdict": "meets"},
                    {"ref": "R1", "check_id": "I9", "verdict": "meets"},
                    {**ids, "check_id": "I1", "verdict": "meets"}):  # fmt: skip
            assert page.evaluate(post, bad) == 400
        assert len(_lines(session.file)) == 1
    finally:
        server.shutdown()
        server.server_close()


def test_adjudication_lists_open_disagreements_with_the_annotators_verdicts(
    page: Any, tmp_path: Path
) -> None:
    config = audited_project(tmp_path / "p", LINES)
    server, session, url = _serve(Project(load_config(config)), "adj", None, True)
    try:
        # food-1 I2 is adjudicated already; plant-3 I1 (a1 meets, a2 missing) is open
        assert [
            (i["question_id"], [c["check_id"] for c in i["checks"]]) for i in session.items
        ] == [("plant-3", ["I1"])]
        assert len(CHECKS["plant-3"]) > 1
        page.goto(url)
        page.wait_for_selector("body[data-ready]")
        assert "Annotators: a1 Meets, a2 Missing" in page.inner_text(".check")
        items = page.evaluate("fetch('api/items').then(r => r.text())")
        assert "alpha" not in items.lower() and '"ref": "R1"' in items  # blind to the model
        page.keyboard.press("1")
        page.wait_for_selector("button[aria-pressed=true]")
        [line] = _lines(session.file)
        assert (line["check_id"], line["verdict"], line["role"]) == ("I1", "meets", "adjudication")
    finally:
        server.shutdown()
        server.server_close()


ATTACK = """async ([url, body]) => {
  await fetch(url, {method: "POST", mode: "no-cors", body});  // text/plain, no preflight
  const headers = {"Content-Type": "application/json"};  // its preflight (OPTIONS) gets no CORS
  const json = await fetch(url, {method: "POST", body, headers}).then(r => r.status, () => "no");
  const form = document.createElement("form");
  form.method = "post"; form.action = url; form.enctype = "text/plain";
  const field = document.createElement("input"); field.name = body; form.append(field);
  document.body.append(form); setTimeout(() => form.submit(), 0);
  return json;
}"""


def test_another_site_in_the_browser_reads_and_writes_nothing(page: Any, tmp_path: Path) -> None:
    project = Project(load_config(audited_project(tmp_path / "p", LINES)))
    sample = tmp_path / "draw.jsonl"
    sample.write_text(
        '{"submission_id": "beta", "setting": "text_only", "question_id": "food-2"}\n'
    )
    server, session, url = _serve(project, "ann-x", sample, False)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>elsewhere</title>")
    site = make_server(tmp_path / "site", port=0)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    check = session.items[0]["checks"][0]
    body = json.dumps({"ref": "R1", "check_id": check["check_id"], "verdict": "meets"})
    try:
        # DNS rebinding: a name resolving to 127.0.0.1 gets the page and its items refused
        for path in ("", "api/items"):
            reply = page.goto(url.replace("127.0.0.1", "rebound.test") + path)
            assert reply.status == 421 and check["text"] not in page.content()
        # another site's page, even knowing the token, cannot write a label
        page.goto(f"http://127.0.0.1:{site.server_address[1]}/")
        with page.expect_navigation() as nav:
            assert page.evaluate(ATTACK, [url + "api/label", body]) == "no"
        assert nav.value.status == 403 and "refused: a post from" in page.content()
        assert not session.file.exists()
    finally:
        for s in (server, site):
            s.shutdown()
            s.server_close()
