"""Held rubrics from a local fake Hub, and the publish files built from paper-scale results.

Targets: 2,000 rubric files fetched (cold) in under 30 s and re-used from the cache (warm) in under
2 s; the publish files for 1.2 M verdict rows built in under 10 s. Prints the measured figures.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

from gamut.config import load_config
from gamut.project import Project
from gamut.publish import publish_files
from tests.hub.fake_hub import FakeHub, FakeRepo, commit_sha, serve_hub

N_RUBRICS = 2000
N_SUBS, N_QUESTIONS, N_CHECKS = 24, 1000, 25


def _config(root: Path, rubrics: str) -> Path:
    (root / "gamut.toml").write_text(
        f'[benchmark]\nquestions = "q.jsonl"\nrubrics = "{rubrics}"\n\n'
        '[judges.j]\nprovider = "replay"\nmodel = "m"\nfamily = "f"\n'
        'replay = "verdicts/j.parquet"\nprimary = true\n'
    )
    return root / "gamut.toml"


def bench_download(root: Path) -> None:
    rubric = {
        "question_id": "q",
        "snippets": [],
        "items": [
            {"id": "I1", "type": "fact", "tier": "answer_critical", "text": "States a fact."}
        ],
    }
    files = {f"rubrics/q{i:05d}.json": json.dumps({**rubric, "question_id": f"q{i:05d}"}).encode()
             for i in range(N_RUBRICS)}  # fmt: skip
    files["README.md"] = b"held\n"
    sha = commit_sha(files)
    with serve_hub(FakeHub({"org/held": FakeRepo({sha: files})}, token="t")) as hub:
        os.environ.update({"GAMUT_HF_ENDPOINT": hub.url, "HF_TOKEN": "t"})
        cfg = load_config(_config(root, f"hf://datasets/org/held@{sha}"))
        t = time.perf_counter()
        path = Project(cfg).rubrics_path
        cold = time.perf_counter() - t
        t = time.perf_counter()
        _ = Project(cfg).rubrics_path
        warm = time.perf_counter() - t
    n = sum(1 for _ in path.rglob("*.json"))
    print(f"held rubrics: {n} files cold {cold:.2f} s ({n / cold:.0f} files/s), warm {warm:.3f} s")


def bench_publish(root: Path) -> None:
    res = root / "results"
    res.mkdir()
    rng = np.random.default_rng(0)
    n = N_SUBS * N_QUESTIONS * N_CHECKS * 2
    verdicts = pd.DataFrame({
        "submission_id": pd.Categorical(np.repeat([f"model-{i:02d}" for i in range(N_SUBS)],
                                                  n // N_SUBS)),
        "setting": pd.Categorical(np.tile(np.repeat(["multimodal", "text_only"],
                                                    N_QUESTIONS * N_CHECKS), N_SUBS)),
        "judge": pd.Categorical(["j"] * n),
        "question_id": pd.Categorical(np.tile(np.repeat([f"q{i:05d}" for i in range(N_QUESTIONS)],
                                                        N_CHECKS), 2 * N_SUBS)),
        "check_id": pd.Categorical(np.tile([f"I{i}" for i in range(N_CHECKS)],
                                           n // N_CHECKS)),
        "kind": pd.Categorical(["fact"] * n),
        "tier": pd.Categorical(["answer_critical"] * n),
        "secondary": np.zeros(n, bool),
        "verdict": pd.Categorical(rng.choice(["meets", "partially_meets", "missing",
                                              "contradicts"], n)),
    })  # fmt: skip
    verdicts.to_parquet(res / "verdicts.parquet")
    board = {"submission_id": [f"model-{i:02d}" for i in range(N_SUBS)],
             "gamut": rng.normal(30, 10, N_SUBS)}  # fmt: skip
    pd.DataFrame(board).to_parquet(res / "leaderboard.parquet")
    cfg = load_config(_config(root, "rubrics"))
    t = time.perf_counter()
    files = publish_files(Project(cfg), "gamut/bench")
    took = time.perf_counter() - t
    size = sum(len(f.data) for f in files)
    print(f"publish files: {n:,} verdict rows -> {len(files)} files, {size / 1e6:.1f} MB "
          f"in {took:.2f} s")  # fmt: skip


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "a").mkdir()
        (Path(d) / "b").mkdir()
        bench_download(Path(d) / "a")
        bench_publish(Path(d) / "b")


if __name__ == "__main__":
    main()
