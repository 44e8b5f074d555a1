"""The review page in headless Chromium: two blind reviewers, a revision, an adjudication."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workbench.test_steps import _proposed
from workbench.review_page import make_review_server
from workbench.store import Workbench

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser-deps` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        p = ctx.new_page()
        errors: list[str] = []
        p.on("pageerror", lambda e: errors.append(str(e)))
        try:
            yield p
        finally:
            ctx.close()
        assert not errors


def _serve(wb: Workbench, annotator: str) -> tuple[Any, str]:
    server = make_review_server(wb, annotator, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.url


def _decide(page: Any, url: str, cid: str, decision: str, question: str | None = None) -> None:
    page.goto(url)
    form = page.locator(f'form[data-id="{cid}"]')
    form.locator(f'input[value="{decision}"]').check()
    if question is not None:
        form.locator('textarea[name="question"]').fill(question)
    with page.expect_navigation():
        form.locator("button").click()
    assert f"recorded: {decision} {cid}" in page.locator("#message").inner_text()


def test_two_blind_reviewers_and_an_adjudicator(tmp_path: Path, page: Any) -> None:
    wb = _proposed(tmp_path)
    c1, c2 = "img-plants-0001.c1", "img-plants-0001.c2"
    servers = {a: _serve(wb, a) for a in ("ann-a", "ann-b", "ann-c")}
    try:
        url_a, url_b, url_c = (servers[a][1] for a in ("ann-a", "ann-b", "ann-c"))
        page.goto(url_a)
        assert page.locator("form.candidate").count() == 2
        assert page.locator("img").first.evaluate("i => i.naturalWidth") > 0
        _decide(page, url_a, c1, "accept")
        _decide(page, url_a, c2, "revise", "What plant is this, and how should I care for it?")
        assert page.locator("#done").is_visible()
        # the second reviewer sees both candidates, and nothing of the first's decisions
        page.goto(url_b)
        text = page.content()
        assert page.locator("form.candidate").count() == 2
        assert "ann-a" not in text and "How should I care" not in text
        _decide(page, url_b, c1, "accept")
        _decide(page, url_b, c2, "discard")
        cands = wb.read("candidates.json")
        assert cands[c1]["state"] == "accepted" and cands[c2]["state"] == "in_review"
        # the disagreement waits for the third annotator, who adjudicates for the revision
        page.goto(url_c)
        assert page.locator("form.candidate").count() == 1
        assert "Adjudicate" in page.locator(f'form[data-id="{c2}"]').inner_text()
        _decide(page, url_c, c2, "revise", "What plant is this, and how should I care for it?")
        cand = wb.read("candidates.json")[c2]
        assert cand["round"] == 2 and cand["question"].startswith("What plant is this, and how")
        # the revised candidate re-enters the next round for every annotator
        page.goto(url_a)
        assert page.locator(f'form[data-id="{c2}"]').inner_text().count("round 2") == 1
    finally:
        for server, _ in servers.values():
            server.shutdown()
            server.server_close()


def test_the_revision_page_edits_checks_and_shows_what_recompiling_changed(
    tmp_path: Path, page: Any
) -> None:
    from tests.workbench.helpers import run
    from workbench.revise_page import make_revise_server

    assert run("build", "demo", "--out", str(tmp_path / "demo"))[0] == 0
    wb = Workbench(tmp_path / "demo" / "workbench")
    server = make_revise_server(wb, "ann-r", port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(server.url)
        page.locator('a[href="q/food-0001"]').click()
        page.wait_for_load_state()
        assert "derived: edit its parts" in page.locator('tr[data-check="I3.b1"]').inner_text()
        page.locator('textarea[name="text:I2.m5"]').fill("eggs")
        page.locator('input[name="delete:I3.m4"]').check()
        with page.expect_navigation():
            page.locator("button").click()
        assert "saved: 2 edit(s)" in page.locator("#message").inner_text()
        diff = page.locator("#differences").inner_text()
        assert "I3.b1: recompiled differently" in diff and "I3.m6: missing" in diff
        # the recompiled check text (second cell) now asks for the edited member
        assert "eggs" in page.locator('tr[data-check="I2.m5"] td').nth(1).inner_text()
        (rnd,) = wb.read("revisions.json")
        assert rnd["annotator"] == "ann-r" and len(rnd["edits"]) == 2
        # saving without a change records nothing
        with page.expect_navigation():
            page.locator("button").click()
        assert "not saved: nothing changed" in page.locator("#message").inner_text()
        assert len(wb.read("revisions.json")) == 1
    finally:
        server.shutdown()
        server.server_close()
