"""``gamut-workbench build demo --out DIR``: every workbench step offline on four of the demo's
images, from recorded replies, snippets, pages and three rounds of annotator decisions shipped
in ``workbench/demo_data/`` (package data), exercising each branch (an image proposed for
again, an adjudication, a revision, a guard rejection and reseeding, repairs, a removed item).
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from workbench.evidence import SavedPages, SnippetsFile, gather
from workbench.images import import_images
from workbench.llm import ReplayLLM
from workbench.questions import apply_decisions, guard, propose
from workbench.release import release
from workbench.rubrics import draft, refine
from workbench.store import Workbench, WorkbenchError

VERSION = "demo-1.0"


def demo_data() -> Path:
    """The folder of the demo's recorded inputs (package data: also in an installed gamut)."""
    return Path(str(resources.files("workbench").joinpath("demo_data")))


#: The demo's four images, copies of ``demo/images`` files (a test keeps them equal), shipped
#: so that ``gamut-workbench build demo`` runs from an installed package too.
DEMO_IMAGES = demo_data() / "images"


def demo_before_guard(out: Path) -> Workbench:
    """The demo's steps before its first guard pass, offline into ``out`` (its workbench in
    ``out/workbench``): the images imported, proposals, the first review round and the image
    proposed for again. Returns the workbench, ready to guard."""
    data = demo_data()
    if out.exists() and any(out.iterdir()):
        raise WorkbenchError(f"{out} is not empty: give a new folder to --out")
    inputs = out / "inputs"
    (inputs / "images").mkdir(parents=True)
    shutil.copy(data / "manifest.csv", inputs / "manifest.csv")
    for line in (data / "manifest.csv").read_text(encoding="utf-8").splitlines()[1:]:
        name = Path(line.split(",")[1]).name
        shutil.copy(DEMO_IMAGES / name, inputs / "images" / name)
    wb = Workbench.open(out / "workbench")
    llm = ReplayLLM(data / "llm.jsonl")
    import_images(wb, inputs / "manifest.csv")
    propose(wb, llm, 2)
    apply_decisions(wb, data / "decisions-1.jsonl")
    propose(wb, llm, 2)  # the image whose candidates were all discarded
    return wb


def run_demo(out: Path) -> dict[str, Any]:
    """Run the whole workbench offline into ``out`` (its workbench in ``out/workbench``)."""
    data = demo_data()
    wb = demo_before_guard(out)
    llm = ReplayLLM(data / "llm.jsonl")
    guard(wb, llm)
    apply_decisions(wb, data / "decisions-2.jsonl")
    guard(wb, llm)  # one image's questions are rejected and new ones seeded
    apply_decisions(wb, data / "decisions-3.jsonl")
    guard(wb, llm)
    gather(wb, SnippetsFile(data / "snippets.jsonl"))
    draft(wb, llm)
    refine(wb, llm, SavedPages(data / "pages.jsonl"))
    return release(wb, VERSION, out)
