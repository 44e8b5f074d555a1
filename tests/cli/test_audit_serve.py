"""``gamut audit serve`` in a real headless Chromium: labels by keyboard go to the annotator's
file, a session resumes, other annotators' verdicts stay hidden, and adjudication lists the open
disagreements."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

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


def test_labelling_by_keyboard_resumes_and_is_blind(page: object, tmp_path: Path) -> None:
    config = audited_project(tmp_path / "p", LINES)
    project = Project(load_config(config))
    sample = tmp_path / "draw.jsonl"
    drawn = [("beta", "text_only", "food-2"), ("alpha", "multimodal", "plant-3")]
    keys = ("submission_id", "setting", "question_id")
    sample.write_text("".join(json.dumps(dict(zip(keys, d, strict=True))) + "\n" for d in drawn))
    server, session, url = _serve(project, "ann-x", sample, False)
    try:
        page.goto(url)  # type: ignore[attr-defined]
        page.wait_for_selector("body[data-ready]")  # type: ignore[attr-defined]
        assert "0 of 2 responses labelled" in page.inner_text("#progress")  # type: ignore[attr-defined]
        page.keyboard.press("1")  # type: ignore[attr-defined]
        page.wait_for_selector(".check:nth-of-type(1) button[aria-pressed=true]")  # type: ignore[attr-defined]
        page.keyboard.press("3")  # type: ignore[attr-defined]
        page.wait_for_function("document.querySelectorAll('button[aria-pressed=true]').length == 2")  # type: ignore[attr-defined]
        got = _lines(session.file)
        assert [(x["check_id"], x["verdict"], x["role"], x["annotator"]) for x in got] == [
            ("I1", "meets", "label", "ann-x"),
            ("I2", "missing", "label", "ann-x"),
        ]
        assert "1 of 2 responses labelled" in page.inner_text("#progress")  # type: ignore[attr-defined]
        # resumable: a reload opens the first response not yet labelled, the labels kept
        page.reload()  # type: ignore[attr-defined]
        page.wait_for_selector("body[data-ready]")  # type: ignore[attr-defined]
        assert "this is 2" in page.inner_text("#progress")  # type: ignore[attr-defined]
        # blind: a1 and a2 labelled alpha's plant-3, but the page never receives their verdicts
        items = page.evaluate("fetch('api/items').then(r => r.text())")  # type: ignore[attr-defined]
        assert (
            '"a1"' not in items
            and '"a2"' not in items
            and "Annotators" not in page.inner_text("#item")
        )  # type: ignore[attr-defined]
        page.keyboard.press("p")  # type: ignore[attr-defined]
        page.keyboard.press("2")  # type: ignore[attr-defined]  # relabel food-2 I1
        pressed = ".check button[data-verdict=partially_meets][aria-pressed=true]"
        page.wait_for_selector(pressed)  # type: ignore[attr-defined]
        got = _lines(session.file)
        assert (
            len(got) == 2
            and got[-1]["check_id"] == "I1"
            and got[-1]["verdict"] == "partially_meets"
        )
    finally:
        server.shutdown()
        server.server_close()


def test_adjudication_lists_open_disagreements_with_the_annotators_verdicts(
    page: object, tmp_path: Path
) -> None:
    config = audited_project(tmp_path / "p", LINES)
    server, session, url = _serve(Project(load_config(config)), "adj", None, True)
    try:
        # food-1 I2 is adjudicated already; plant-3 I1 (a1 meets, a2 missing) is open
        assert [
            (i["question_id"], [c["check_id"] for c in i["checks"]]) for i in session.items
        ] == [("plant-3", ["I1"])]
        assert len(CHECKS["plant-3"]) > 1
        page.goto(url)  # type: ignore[attr-defined]
        page.wait_for_selector("body[data-ready]")  # type: ignore[attr-defined]
        assert "Annotators: a1 meets, a2 missing" in page.inner_text(".check")  # type: ignore[attr-defined]
        page.keyboard.press("1")  # type: ignore[attr-defined]
        page.wait_for_selector("button[aria-pressed=true]")  # type: ignore[attr-defined]
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


def test_another_site_in_the_browser_reads_and_writes_nothing(page: object, tmp_path: Path) -> None:
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
    label = {k: session.items[0][k] for k in ("submission_id", "setting", "question_id")}
    body = json.dumps({**label, "check_id": check["check_id"], "verdict": "meets"})
    try:
        # DNS rebinding: a name resolving to 127.0.0.1 gets the page and its items refused
        for path in ("", "api/items"):
            reply = page.goto(url.replace("127.0.0.1", "rebound.test") + path)  # type: ignore[attr-defined]
            assert reply.status == 421 and check["text"] not in page.content()  # type: ignore[attr-defined]
        # another site's page, even knowing the token, cannot write a label
        page.goto(f"http://127.0.0.1:{site.server_address[1]}/")  # type: ignore[attr-defined]
        with page.expect_navigation() as nav:  # type: ignore[attr-defined]
            assert page.evaluate(ATTACK, [url + "api/label", body]) == "no"  # type: ignore[attr-defined]
        assert nav.value.status == 403 and "refused: a post from" in page.content()  # type: ignore[attr-defined]
        assert not session.file.exists()
    finally:
        for s in (server, site):
            s.shutdown()
            s.server_close()
