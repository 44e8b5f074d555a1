"""Every `gamut-workbench build` step through the command line, as a maintainer runs them; no output
carries held text (snippets, items, members, check text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.workbench.helpers import run, write_config
from tests.workbench.test_demo import _held_strings
from workbench.demo import DEMO_IMAGES, demo_data


def test_the_build_commands_in_order(tmp_path: Path) -> None:
    cfg = str(write_config(tmp_path))
    data = demo_data()
    (tmp_path / "images").mkdir()
    for f in DEMO_IMAGES.glob("img-*-000[12].png"):
        shutil.copy(f, tmp_path / "images")
    shutil.copy(data / "manifest.csv", tmp_path / "manifest.csv")
    llm = str(data / "llm.jsonl")
    outputs = []

    def step(*args: str, expect: str) -> str:
        code, out = run("build", *args, "--config", cfg)
        assert code == 0, (args, out)
        assert expect in out, (args, out)
        outputs.append(out)
        return out

    step("status", expect="next: gamut-workbench build images MANIFEST")
    step("images", str(tmp_path / "manifest.csv"), expect="added 4")
    step("propose", "--per-image", "2", "--replay", llm, expect="for 4 image(s)")
    step("review", "apply", str(data / "decisions-1.jsonl"), expect="accept 3")
    step("propose", "--per-image", "2", "--replay", llm, expect="for 1 image(s)")
    step("guard", "--replay", llm, expect="entered 2")
    step("review", "apply", str(data / "decisions-2.jsonl"), expect="accept 3")
    step("guard", "--replay", llm, expect="reseeded 1")
    step("review", "apply", str(data / "decisions-3.jsonl"), expect="accept 1")
    step("guard", "--replay", llm, expect="next: gamut-workbench build evidence")
    step("evidence", "--snippets", str(data / "snippets.jsonl"), expect="for 4 question(s)")
    step("draft", "--replay", llm, expect="ok 4, repaired 1")
    step(
        "refine",
        "--replay",
        llm,
        "--pages",
        str(data / "pages.jsonl"),
        expect="next: gamut-workbench build release VERSION",
    )
    status = json.loads(step("status", "--json", expect='"refined": 4'))
    assert status["candidates"]["entered"] == 4 and status["candidates"]["discarded"] == 4
    step("drop", "plants-0002", "--reason", "wrong entity upstream", expect="dropped plants-0002")
    step("release", "v1", expect="released v1: 3 questions")
    report = json.loads(step("diversity", expect="plants"))
    assert report["plants"]["selected"][0][1] == 1
    code, out = run("build", "propose", "--per-image", "2", "--config", cfg)
    assert code == 2 and "--replay" in out
    held = _held_strings(tmp_path / "wb" / "releases" / "v1" / "rubrics")
    assert held
    for text in held:
        assert all(text not in out for out in outputs)
