"""The benchmark workbench at paper scale: 1,938 images, 3 candidates each, 1,843 rubrics.

Runs every ``gamut build`` step on synthetic inputs in a temporary folder, the LLM steps through
``gamut.workbench.llm.CountingLLM`` (synthetic replies, nothing sent), and prints for each step its
wall time and the process's peak resident memory after it (target: every non-LLM step under 30 s
and 1 GB), and for each LLM step the requests and estimated tokens it would send with their cost
at the root gamut.toml primary judge's prices, direct and batch (the workbench is to use the
judge's backends). Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_workbench.py``.
"""

from __future__ import annotations

import json
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_compile import make_rubric  # noqa: E402
from gamut.config import load_config  # noqa: E402
from gamut.workbench.evidence import SavedPages, SnippetsFile, gather  # noqa: E402
from gamut.workbench.images import import_images  # noqa: E402
from gamut.workbench.llm import CountingLLM, LLMRequest  # noqa: E402
from gamut.workbench.questions import (  # noqa: E402
    CANDIDATES,
    apply_decisions,
    diversity,
    guard,
    propose,
)
from gamut.workbench.release import release  # noqa: E402
from gamut.workbench.revision import apply_edits  # noqa: E402
from gamut.workbench.rubrics import draft, refine  # noqa: E402
from gamut.workbench.status import counts  # noqa: E402
from gamut.workbench.store import Workbench  # noqa: E402

N_IMAGES, PER_IMAGE, N_RUBRICS = 1938, 3, 1843
DOMAINS = ["plants", "food", "animals", "vehicles", "local_places", "everyday_objects"]
OPENINGS = ["what is this", "how does this", "where does this", "why is this", "what makes this"]
TARGET_S, TARGET_MB = 30.0, 1024.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(name: str, fn: Callable[[], Any], rows: list[tuple[str, float, float, bool]]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    rows.append((name, time.perf_counter() - t0, peak_mb(), True))
    return out


def answer(unsound: set[str]) -> Callable[[LLMRequest], Any]:
    rng = random.Random(1)

    def reply(req: LLMRequest) -> Any:
        key = req.key.split("#")[0]
        if req.template == "propose_v1":
            return {
                "questions": [
                    {
                        "question": f"{rng.choice(OPENINGS)} {k} thing and how is it used today?",
                        "text_only_question": f"What is entity {key} and how is it used today?",
                    }
                    for k in range(PER_IMAGE)
                ]
            }
        if req.template == "guard_v1":
            ids = [
                line.split(":")[0]
                for line in req.user.split("Candidates (id: question):\n")[1].splitlines()
            ]
            checks = [
                {"candidate_id": c, "passes": True, "boilerplate": i > 0} for i, c in enumerate(ids)
            ]
            return {"checks": checks, "selected": ids[0], "new_candidates": []}
        qid = req.key.split(":")[-1]
        items = make_rubric(int(qid.rsplit("-", 1)[1]), random.Random(qid))["items"]
        if req.template in ("refine_v1", "repair_v1") and qid in unsound:
            return {"items": items[1:]}  # drops an item without a reason: refused twice
        return {"items": items}

    return reply


def main() -> None:
    rows: list[tuple[str, float, float, bool]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "images").mkdir()
        lines = ["image_id,file,entity,domain,popularity,egocentric,question_id"]
        for i in range(N_IMAGES):
            (base / "images" / f"img-{i:05d}.png").write_bytes(b"\x89PNG" + i.to_bytes(4) * 256)
            pop = ("head", "torso", "tail")[i % 3]
            lines.append(
                f"img-{i:05d},images/img-{i:05d}.png,entity {i},{DOMAINS[i % 6]},{pop},"
                f"{'true' if i % 4 == 0 else 'false'},q-{i:05d}"
            )
        (base / "manifest.csv").write_text("\n".join(lines) + "\n")
        wb = Workbench.open(base / "wb")
        unsound = {f"q-{i:05d}" for i in range(N_IMAGES - N_RUBRICS)}
        llm = CountingLLM(answer(unsound), group=step_of)

        timed("images (import, checksum)", lambda: import_images(wb, base / "manifest.csv"), rows)
        timed("propose (LLM)", lambda: propose(wb, llm, PER_IMAGE), rows)
        rows[-1] = (*rows[-1][:3], False)
        cands = wb.read(CANDIDATES)
        decisions = []
        for cid in cands:
            first = cid.endswith(".c1")
            for who in ("ann-a", "ann-b"):
                d = "accept" if first or who == "ann-a" else "discard"
                decisions.append(
                    {
                        "candidate_id": cid,
                        "round": 1,
                        "annotator": who,
                        "role": "review",
                        "decision": d,
                    }
                )
            if not first:
                decisions.append(
                    {
                        "candidate_id": cid,
                        "round": 1,
                        "annotator": "ann-c",
                        "role": "adjudication",
                        "decision": "discard",
                    }
                )
        with (base / "decisions.jsonl").open("w") as f:
            f.writelines(json.dumps(d) + "\n" for d in decisions)
        timed(
            f"review apply ({len(decisions)} decisions)",
            lambda: apply_decisions(wb, base / "decisions.jsonl"),
            rows,
        )
        timed("guard (LLM)", lambda: guard(wb, llm), rows)
        rows[-1] = (*rows[-1][:3], False)
        timed("diversity report", lambda: diversity(wb), rows)
        with (base / "snippets.jsonl").open("w") as f:
            for i in range(N_IMAGES):
                for s in range(8):
                    f.write(
                        json.dumps(
                            {
                                "question_id": f"q-{i:05d}",
                                "url": f"https://example.org/{i}/{s}",
                                "title": f"source {s}",
                                "text": f"evidence {s} for entity {i}. " * 6,
                                "retrieved": "2026-11-30",
                            }
                        )
                        + "\n"
                    )
        timed(
            "evidence (snippets file)",
            lambda: gather(wb, SnippetsFile(base / "snippets.jsonl")),
            rows,
        )
        timed("draft (LLM + validate + compile)", lambda: draft(wb, llm), rows)
        rows[-1] = (*rows[-1][:3], False)
        with (base / "pages.jsonl").open("w") as f:
            for i in range(N_IMAGES):
                page = "A saved page. " + f"evidence 0 for entity {i}. " * 6 + "The end."
                f.write(json.dumps({"url": f"https://example.org/{i}/0", "text": page}) + "\n")
        pages = SavedPages(base / "pages.jsonl")
        timed("refine (audit + LLM + superset + compile)", lambda: refine(wb, llm, pages), rows)
        rows[-1] = (*rows[-1][:3], False)
        with (base / "edits.jsonl").open("w") as f:
            for i in range(N_IMAGES - N_RUBRICS, N_IMAGES):
                edit = {"question_id": f"q-{i:05d}", "check_id": "I1", "text": "Revised fact."}
                f.write(json.dumps(edit) + "\n")
        timed(
            f"revise apply ({N_RUBRICS} edits)",
            lambda: apply_edits(wb, base / "edits.jsonl", "ann-r"),
            rows,
        )
        timed("status", lambda: counts(wb), rows)
        meta = timed("release", lambda: release(wb, "bench-1"), rows)

    print(
        f"bench_workbench: {N_IMAGES} images x {PER_IMAGE} candidates; "
        f"release: {meta['n_questions']} rubrics, {meta['n_checks']} checks"
    )
    print(
        f"  {'step':42} {'time':>9} {'peak RSS':>10}  target (non-LLM: < {TARGET_S:.0f} s, < 1 GB)"
    )
    for name, secs, mb, checked in rows:
        verdict = (
            ("ok" if secs < TARGET_S and mb < TARGET_MB else "OVER")
            if checked
            else "(LLM step: replies synthetic)"
        )
        print(f"  {name:42} {secs:8.2f}s {mb:8.0f} MB  {verdict}")
    cfg = load_config(ROOT / "gamut.toml")
    judge = cfg.judges[cfg.primary_judge]
    print(
        f"  LLM requests per step at paper scale (tokens estimated at 4 characters a token; an "
        f"image {llm.image_tokens} tokens; repairs counted in their step), priced as judge "
        f"{cfg.primary_judge} ({judge.model}) by JudgeConfig.cost, direct and batch:"
    )
    steps: dict[str, list[int]] = {}
    for t in llm.requests:
        row = steps.setdefault(t, [0, 0, 0])
        row[0] += llm.requests[t]
        row[1] += llm.input_tokens[t]
        row[2] += llm.output_tokens[t]
    totals = [0, 0, 0]
    usd = {"direct": 0.0, "batch": 0.0}
    for step in ("propose", "guard", "draft", "refine"):
        n, i, o = steps.get(step, [0, 0, 0])
        totals = [totals[0] + n, totals[1] + i, totals[2] + o]
        priced = {m: judge.cost(m, i, 0, o) for m in usd}
        for m, v in priced.items():
            usd[m] += v or 0.0
        print(
            f"    {step:8} {n:6,} requests  {i:12,} in  {o:11,} out tokens  "
            f"{_usd(priced['direct'])} direct  {_usd(priced['batch'])} batch"
        )
    print(
        f"    {'total':8} {totals[0]:6,} requests  {totals[1]:12,} in  {totals[2]:11,} out tokens  "
        f"{_usd(usd['direct'])} direct  {_usd(usd['batch'])} batch"
    )
    print(
        "  (real guard rounds, re-proposals and review rounds add requests; propose and guard "
        "send the image too)"
    )


def step_of(req: LLMRequest) -> str:
    """The step a request belongs to: its template's, or for a repair (key
    ``<template>:<key>``) the repaired template's."""
    template = req.key.split(":", 1)[0] if ":" in req.key else req.template
    return template.rsplit("_v", 1)[0]


def _usd(value: float | None) -> str:
    return "   (no price)" if value is None else f"${value:11,.2f}"


if __name__ == "__main__":
    main()
