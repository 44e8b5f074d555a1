"""The workbench steps one at a time: refusals with file:line, the rounds' rules, status."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from scoring.errors import ProblemsError
from tests.workbench.helpers import run, write_config, write_jsonl
from workbench.demo import DEMO_IMAGES, demo_data
from workbench.images import read_manifest
from workbench.llm import LLMError, LLMRequest, ReplayLLM, ask
from workbench.questions import Proposal, apply_decisions, propose
from workbench.store import Workbench


def _manifest(tmp_path: Path) -> Path:
    (tmp_path / "images").mkdir()
    for f in DEMO_IMAGES.glob("img-*-0001.png"):
        shutil.copy(f, tmp_path / "images" / f.name)
    shutil.copy(demo_data() / "manifest.csv", tmp_path / "manifest.csv")
    return tmp_path / "manifest.csv"


def test_images_are_imported_checksummed_into_a_private_folder(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    _manifest(tmp_path)
    # plants-0002's image is absent: copy it too
    shutil.copy(DEMO_IMAGES / "img-plants-0002.png", tmp_path / "images")
    code, out = run("build", "images", str(tmp_path / "manifest.csv"), "--config", str(cfg))
    assert code == 0, out
    assert "added 4" in out and "next: gamut-workbench build propose" in out
    wb = tmp_path / "wb"
    assert stat.S_IMODE(wb.stat().st_mode) == 0o700
    images = json.loads((wb / "images.json").read_text())
    assert len(images["img-food-0001"]["sha256"]) == 64
    code, out = run("build", "status", "--json", "--config", str(cfg))
    assert code == 0 and json.loads(out)["images_needing_proposals"] == 4


def test_manifest_problems_are_all_reported_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"png")
    bad = tmp_path / "m.csv"
    bad.write_text(
        "image_id,file,entity,domain,popularity,egocentric\n"
        "img-1,a.png,Pad thai,food,head,true\n"
        "img-1,a.png,Pad thai,food,head,true\n"
        "img-2,missing.png,Ginkgo,plants,head,false\n"
        "img-3,a.png,Ginkgo,plants,famous,maybe\n",
        encoding="utf-8",
    )
    with pytest.raises(ProblemsError) as exc:
        read_manifest(bad)
    text = str(exc.value)
    assert f"{bad}:3: duplicate image_id img-1" in text
    assert f"{bad}:4: image file missing.png: No such file or directory" in text
    assert f"{bad}:5: popularity" in text and f"{bad}:5: egocentric" in text
    jl = write_jsonl(tmp_path / "m.jsonl", [{"image_id": "x", "file": "a.png"}])
    with pytest.raises(ProblemsError) as exc:
        read_manifest(jl)
    assert f"{jl}:1: entity: Field required" in str(exc.value)


def _proposed(tmp_path: Path) -> Workbench:
    m = _manifest(tmp_path)
    m.write_text("\n".join(m.read_text().splitlines()[:2]) + "\n")  # plants-0001 only
    wb = Workbench.open(tmp_path / "wb")
    from workbench.images import import_images

    import_images(wb, m)
    propose(wb, ReplayLLM(demo_data() / "llm.jsonl"), 2)
    return wb


def _d(cid: str, who: str, decision: str, role: str = "review", rnd: int = 1) -> dict[str, object]:
    return {"candidate_id": cid, "round": rnd, "annotator": who, "role": role, "decision": decision}


def test_a_disagreement_waits_for_a_third_annotator(tmp_path: Path) -> None:
    wb = _proposed(tmp_path)
    c = "img-plants-0001.c1"
    f1 = write_jsonl(tmp_path / "d1.jsonl", [_d(c, "a", "accept"), _d(c, "b", "discard")])
    assert apply_decisions(wb, f1)["awaiting"] == 2
    f2 = write_jsonl(tmp_path / "d2.jsonl", [_d(c, "c", "accept", "adjudication")])
    counts = apply_decisions(wb, f2)
    assert counts["accept"] == 1 and wb.read("candidates.json")[c]["state"] == "accepted"


def test_bad_decisions_are_all_refused(tmp_path: Path) -> None:
    wb = _proposed(tmp_path)
    c = "img-plants-0001.c1"
    f = write_jsonl(
        tmp_path / "d.jsonl",
        [
            _d("img-nope.c1", "a", "accept"),
            _d(c, "a", "accept", rnd=2),
            _d(c, "a", "revise"),
            {"candidate_id": c},
        ],
    )
    with pytest.raises(ProblemsError) as exc:
        apply_decisions(wb, f)
    text = str(exc.value)
    assert f"{f}:1: unknown candidate img-nope.c1" in text
    assert f"{f}:2: {c} is in round 1, not 2" in text
    assert f"{f}:3: revise without edited text" in text
    assert f"{f}:4: round: Field required" in text
    ok = write_jsonl(tmp_path / "ok.jsonl", [_d(c, "a", "accept"), _d(c, "b", "discard")])
    apply_decisions(wb, ok)
    again = write_jsonl(
        tmp_path / "again.jsonl", [_d(c, "a", "discard"), _d(c, "b", "accept", "adjudication")]
    )
    with pytest.raises(ProblemsError) as exc:
        apply_decisions(wb, again)
    text = str(exc.value)
    assert f"{again}:1: a already decided {c} in round 1" in text
    assert f"{again}:2: b already decided {c} in round 1" in text and "not a reviewer" in text
    third = write_jsonl(tmp_path / "third.jsonl", [_d(c, "x", "accept")])
    with pytest.raises(ProblemsError, match="three reviewers"):
        apply_decisions(wb, third)
    assert wb.read("candidates.json")[c]["state"] == "in_review"


def test_a_reply_off_the_schema_is_an_error_never_a_default(tmp_path: Path) -> None:
    class Bad:
        def complete(self, request: LLMRequest) -> object:
            assert request.schema["required"] == ["questions"] and "Domain: food" in request.user
            return {"questions": []}

    with pytest.raises(LLMError, match="questions"):
        ask(
            Bad(),
            "propose_v1",
            "k",
            {"k": "2", "domain": "food", "entity": "e", "avoid": ""},
            Proposal,
        )
    replay = ReplayLLM(demo_data() / "llm.jsonl")
    with pytest.raises(LLMError, match="no recorded propose_v1 reply for nobody#1"):
        ask(
            replay,
            "propose_v1",
            "nobody#1",
            {"k": "2", "domain": "d", "entity": "e", "avoid": ""},
            Proposal,
        )


def test_a_workbench_inside_a_published_folder_is_refused(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, workbench="results/wb")
    code, out = run("build", "status", "--config", str(cfg))
    assert code == 1 and "inside the results folder" in out
