"""Validate a paper-scale submission (1,813 questions, both settings) against 20 existing ones.

The first validation computes the other submissions' fingerprints for the copy check and caches
them in the store (cold); the next ones read them from the cache (warm). Also times the rejection
of a 50 MB response file, which must not be read into memory. Prints the measured figures; no
assertion on time.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.submissions import Limits
from scoring.submissions.responses import read_response_file

N_QUESTIONS, N_OTHERS, WORDS_PER_RESPONSE = 1813, 20, 250
#: Measured before the fingerprint cache (every validation re-read the 20 other submissions).
BASELINE_ONE_S = 2.06
TARGET_ONE_S = 0.5
DOMAINS = ["plants", "food", "animals", "vehicles", "local places", "everyday objects", "products"]
META = {
    "model_name": "Bench", "organisation": "Bench", "model_family": "bench",
    "link": "https://example.org", "open_weights": True, "date": "2026-11-01", "contact": "@b",
    "production": {"decoding": "temperature 0", "tools": False, "web_access": False},
}  # fmt: skip
CONFIG = """[benchmark]
questions = "questions.jsonl"
rubrics = "rubrics"
submissions = "submissions"
[judges.f]
provider = "replay"
model = "f"
replay = "verdicts.parquet"
family = "f"
primary = true
"""


def write_project(root: Path, rng: random.Random) -> list[str]:
    vocab = [f"w{i}" for i in range(5000)]
    qids = [f"q-{i:05d}" for i in range(N_QUESTIONS)]
    with (root / "questions.jsonl").open("w") as f:
        for i, q in enumerate(qids):
            f.write(json.dumps({
                "question_id": q, "image_id": f"img-{i}", "image": f"images/{i}.jpg",
                "domain": DOMAINS[i % len(DOMAINS)], "popularity": "head", "egocentric": False,
                "question": f"What is this thing {i}?",
                "text_only_question": f"What is entity {i}?",
            }) + "\n")  # fmt: skip
    (root / "gamut.toml").write_text(CONFIG)
    for s in range(N_OTHERS + 1):
        folder = root / "submissions" / f"model-{s:02d}"
        folder.mkdir(parents=True)
        # display names are unique across submissions (the validator rejects a duplicate)
        meta = {**META, "model_name": f"Bench {s:02d}"}
        (folder / "submission.yaml").write_text(yaml.safe_dump(meta))
        for setting in ("multimodal", "text_only"):
            with (folder / f"{setting}.jsonl").open("w") as f:
                for q in qids:
                    text = " ".join(rng.choices(vocab, k=WORDS_PER_RESPONSE))
                    f.write(json.dumps({"question_id": q, "response": text}) + "\n")
    return qids


def main() -> None:
    """Build the project in a temporary folder and print the timings."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, rng)
        cfg = load_config(root / "gamut.toml")
        target = root / "submissions" / "model-00"
        size = (target / "multimodal.jsonl").stat().st_size
        project = Project(cfg)
        project.digests_path.unlink(missing_ok=True)
        start, cpu = time.perf_counter(), time.process_time()
        report = pipeline.validate(project, [target])
        cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
        assert report.ok, report.to_text()
        warm, warm_cpu = [], []
        for _ in range(3):
            start, cpu = time.perf_counter(), time.process_time()
            report = pipeline.validate(Project(cfg), [target])
            warm.append(time.perf_counter() - start)
            warm_cpu.append(time.process_time() - cpu)
            assert report.ok, report.to_text()
        tracemalloc.start()
        pipeline.validate(Project(cfg), [target])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        one = min(warm)
        print(
            f"one submission, {N_QUESTIONS} questions x 2 settings ({size / 1e6:.1f} MB per "
            f"file), copy check against {N_OTHERS} others:"
        )
        print(f"  cold (fingerprints computed and cached): {cold:.2f} s ({cold_cpu:.2f} s CPU)")
        print(
            f"  warm (fingerprints from the cache, best of 3): {one:.2f} s "
            f"({min(warm_cpu):.2f} s CPU; {cold / one:.1f}x faster than cold) "
            f"(baseline {BASELINE_ONE_S:.2f} s, {BASELINE_ONE_S / one:.1f}x faster; "
            f"target {TARGET_ONE_S} s: {'met' if one <= TARGET_ONE_S else 'MISSED'}), "
            f"peak traced memory {peak / 1e6:.0f} MB; cache file "
            f"{project.digests_path.stat().st_size / 1e6:.1f} MB"
        )

        start, cpu = time.perf_counter(), time.process_time()
        report = pipeline.validate(Project(cfg))
        every, every_cpu = time.perf_counter() - start, time.process_time() - cpu
        print(
            f"all {N_OTHERS + 1} submissions: {every:.2f} s ({every_cpu:.2f} s CPU) "
            f"({every / (N_OTHERS + 1):.2f} s per submission)"
        )

        big = target / "multimodal.jsonl"
        with big.open("r+b") as f:
            f.truncate(50 * 1024 * 1024)
        start = time.perf_counter()
        report = pipeline.validate(Project(cfg), [target])
        whole = time.perf_counter() - start
        assert any("over the 8.0 MB limit" in p.message for p in report.errors)
        tracemalloc.start()
        start = time.perf_counter()
        read = read_response_file(big, "big", "multimodal", None, Limits())
        reject = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert read.problems and not read.responses
        print(
            f"50 MB response file: rejected in {reject * 1000:.2f} ms with "
            f"{peak / 1e3:.0f} kB peak traced memory; whole validation {whole:.2f} s"
        )


if __name__ == "__main__":
    main()
