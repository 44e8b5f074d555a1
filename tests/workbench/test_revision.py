"""Human revision: edits of checks mapped back to their items, recompiled, differences listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.errors import ProblemsError
from tests.workbench.helpers import run, write_jsonl
from workbench.revision import REVISIONS, apply_edits
from workbench.store import Workbench


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    assert run("build", "demo", "--out", str(tmp_path / "demo"))[0] == 0
    return Workbench(tmp_path / "demo" / "workbench")


def test_edits_map_to_items_and_the_recompiled_differences_are_listed(
    wb: Workbench, tmp_path: Path
) -> None:
    edits = write_jsonl(
        tmp_path / "e.jsonl",
        [
            {
                "question_id": "food-0001",
                "check_id": "I1",
                "text": "Identifies the dish as pad thai.",
            },
            {"question_id": "food-0001", "check_id": "I3.m4", "delete": True},
            {"question_id": "food-0001", "check_id": "I2.m5", "text": "eggs"},
        ],
    )
    counts = apply_edits(wb, edits, "ann-r")
    assert counts == {"questions": 1, "edits": 3, "differences": counts["differences"]}
    rubric = wb.read("rubrics/food-0001.json")
    items = {i["id"]: i for i in rubric["items"]}
    assert items["I1"]["text"] == "Identifies the dish as pad thai."
    assert items["I2"]["members"][-1] == "eggs"
    assert "dried shrimp" not in items["I3"]["members"] and len(items["I3"]["members"]) == 5
    (rnd,) = wb.read(REVISIONS)
    assert rnd["annotator"] == "ann-r" and rnd["round"] == 1 and rnd["at"].endswith("+00:00")
    diff = {d["check_id"]: d["difference"] for d in rnd["differences"]}
    # the threshold over the list now names five members; its 6th per-member check is gone,
    # and the deleted 4th is taken by what was the 5th
    assert diff["I3.b1"] == "recompiled differently"
    assert diff["I3.m6"] == "missing after recompiling"
    assert diff["I3.m4"] == "deleted, but recompiled (shifted)"
    assert "I1" not in diff and "I2.m5" not in diff


def test_bad_edits_are_all_refused_and_nothing_written(wb: Workbench, tmp_path: Path) -> None:
    before = wb.read("rubrics/food-0001.json")
    edits = write_jsonl(
        tmp_path / "e.jsonl",
        [
            {"question_id": "food-0001", "check_id": "I3.b1", "text": "x"},
            {"question_id": "food-0001", "check_id": "I9", "text": "x"},
            {"question_id": "food-0001", "check_id": "I7.e", "text": "x"},
            {"question_id": "food-0001", "check_id": "I1"},
            {"question_id": "nope", "check_id": "I1", "text": "x"},
        ],
    )
    with pytest.raises(ProblemsError) as exc:
        apply_edits(wb, edits, "ann-r")
    text = str(exc.value)
    assert f"{edits}:1: question food-0001: I3.b1 is not a check of its own" in text
    assert f"{edits}:2: question food-0001: no check I9" in text
    assert f"{edits}:3: question food-0001: I7.e names the related entity" in text
    assert f"{edits}:4: question food-0001: give either text or delete" in text
    assert f"{edits}:5: no refined rubric nope" in text
    assert wb.read("rubrics/food-0001.json") == before and wb.read(REVISIONS) is None


def test_a_revised_rubric_is_refined_again_before_the_second_round(
    wb: Workbench, tmp_path: Path
) -> None:
    from workbench.demo import demo_data
    from workbench.evidence import SavedPages
    from workbench.llm import LLMRequest
    from workbench.rubrics import refine

    pages = SavedPages(demo_data() / "pages.jsonl")

    edits = write_jsonl(
        tmp_path / "e.jsonl", [{"question_id": "food-0001", "check_id": "I2.m5", "text": "eggs"}]
    )
    apply_edits(wb, edits, "ann-r")
    revised = wb.read("rubrics/food-0001.json")
    sent: list[LLMRequest] = []

    class Again:
        def complete(self, request: LLMRequest) -> object:
            sent.append(request)
            extra = {"id": "I9", "type": "fact", "tier": "context", "text": "Notes a variant."}
            return {"items": [*revised["items"], extra]}

    assert refine(wb, Again(), pages) == {"ok": 1}
    assert [r.key for r in sent] == ["food-0001#2"] and "eggs" in sent[0].user
    assert wb.read("rubrics/food-0001.json")["items"][-1]["id"] == "I9"
    assert refine(wb, Again(), pages) == {} and len(sent) == 1  # nothing new to refine


def test_two_human_rounds_with_a_refinement_between_and_no_third(
    wb: Workbench, tmp_path: Path
) -> None:
    from workbench.demo import demo_data
    from workbench.evidence import SavedPages
    from workbench.llm import LLMRequest
    from workbench.rubrics import refine

    def edit(n: int) -> Path:
        row = {"question_id": "food-0001", "check_id": "I1", "text": f"Names the dish ({n})."}
        return write_jsonl(tmp_path / f"e{n}.jsonl", [row])

    class Again:
        def complete(self, request: LLMRequest) -> object:
            return {"items": wb.read("rubrics/food-0001.json")["items"]}

    assert apply_edits(wb, edit(1), "ann-r")["edits"] == 1
    with pytest.raises(ProblemsError) as exc:  # round 2 waits for the LLM refinement
        apply_edits(wb, edit(2), "ann-s")
    assert f"{tmp_path / 'e2.jsonl'}:1: question food-0001: round 1 is done" in str(exc.value)
    assert "run `gamut-workbench build refine` first" in str(exc.value)
    assert refine(wb, Again(), SavedPages(demo_data() / "pages.jsonl")) == {"ok": 1}
    assert apply_edits(wb, edit(2), "ann-s")["edits"] == 1
    assert [r["round"] for r in wb.read(REVISIONS)] == [1, 2]
    before = wb.read("rubrics/food-0001.json")
    with pytest.raises(ProblemsError) as exc:
        apply_edits(wb, edit(3), "ann-t")
    assert "has had its 2 human revision rounds" in str(exc.value)
    assert "gamut-workbench build correct|drop food-0001" in str(exc.value)
    assert wb.read("rubrics/food-0001.json") == before and len(wb.read(REVISIONS)) == 2
