"""The committed demo data: what the generator writes, and the profiles hold on the real rubrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from gamut.config import load_config
from gamut.project import Project
from scoring import score_question
from scoring.rubric_io import compile_all, load_rubrics
from workbench.synthetic.demo import generate_demo

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo"


def test_committed_demo_data_is_what_the_generator_writes(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    shutil.copy(DEMO / "gamut.toml", tmp_path / "demo" / "gamut.toml")
    shutil.copy(DEMO / "questions.jsonl", tmp_path / "demo" / "questions.jsonl")
    shutil.copytree(DEMO / "rubrics", tmp_path / "demo" / "rubrics")
    written = generate_demo(Project.load(tmp_path / "demo" / "gamut.toml"))
    for path in written:
        committed = ROOT / path.relative_to(tmp_path)
        assert committed.is_file(), f"{committed} is missing: run gamut-workbench demo write"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed} is stale: run gamut-workbench demo write and commit the result"
        )


def test_profiles_hold_on_the_demo_rubrics() -> None:
    cfg = load_config(DEMO / "gamut.toml")
    checks = compile_all(load_rubrics([cfg.path(Path(cfg.benchmark.rubrics))]))
    labels = pd.read_parquet(DEMO / "verdicts" / "oracle.parquet")
    rows = []
    for (sid, setting, qid), g in labels.groupby(["submission_id", "setting", "question_id"]):
        score = score_question(checks[qid], dict(zip(g.check_id, g.verdict, strict=True)))
        rows.append((sid, setting, 100 * score.gamut))
    scores = pd.DataFrame(rows, columns=["sid", "setting", "gamut"])
    by = scores.pivot_table(index="sid", columns="setting", values="gamut")
    assert by.multimodal.idxmax() == "quillfeather-ultra"
    assert (by.text_only - by.multimodal).idxmax() == "lanternfish-text"
    share = labels.groupby("submission_id").verdict.value_counts(normalize=True).unstack()
    assert share.contradicts.idxmax() == "brassbell-bold"
    assert share.missing.idxmax() == "hushmoth-careful"
