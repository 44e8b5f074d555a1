"""The demo generator: deterministic, complete, and each fictional model's profile holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from gamut.project import Project
from scoring import score_question
from scoring.questions import Popularity, Question, load_questions
from scoring.rubric import MetaRubric
from scoring.rubric_io import compile_all, load_rubrics
from scoring.submissions.formats import SubmissionMeta
from workbench.cli import main
from workbench.synthetic.demo import REPLAY_COLUMNS, compose_all, generate_demo
from workbench.synthetic.paper import random_rubric
from workbench.synthetic.profiles import DEMO_MODELS, PARTISAN_OWN_FAMILY_UPGRADE

FIXTURES = Path(__file__).parent / "fixtures"
DOMAINS = ("plants", "food", "animals", "vehicles", "landmarks", "objects")


def _fixture_project(tmp: Path) -> Path:
    shutil.copytree(FIXTURES, tmp, dirs_exist_ok=True)
    return tmp / "gamut.toml"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for sub in ("submissions", "verdicts")
        for p in sorted((root / sub).rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    a = _fixture_project(tmp_path / "a")
    b = _fixture_project(tmp_path / "b")
    written = generate_demo(Project.load(a))
    generate_demo(Project.load(b))
    files_a, files_b = _files(a.parent), _files(b.parent)
    assert len(files_a) == len(written) == len(DEMO_MODELS) * 3 + 3
    assert files_a == files_b
    generate_demo(Project.load(a), seed=1)
    assert _files(a.parent) != files_b


def test_every_submission_is_valid_and_answers_every_question_once(tmp_path: Path) -> None:
    config = _fixture_project(tmp_path)
    generate_demo(Project.load(config))
    qids = sorted(q.question_id for q in load_questions(tmp_path / "questions.jsonl"))
    families = []
    for model in DEMO_MODELS:
        folder = tmp_path / "submissions" / model.submission_id
        meta = SubmissionMeta.model_validate(
            yaml.safe_load((folder / "submission.yaml").read_text())
        )
        assert meta.demo and "fictional" in meta.organisation
        families.append(meta.model_family)
        for setting in ("multimodal", "text_only"):
            lines = (folder / f"{setting}.jsonl").read_text(encoding="utf-8").splitlines()
            rows = [json.loads(line) for line in lines]
            assert [r["question_id"] for r in rows] == qids
            assert all(r["response"].strip() for r in rows)
            assert all("\n\n" in r["response"] or len(r["response"]) < 400 for r in rows)
    assert 1 <= families.count("aurora") <= 2


def test_replay_files_cover_every_check_of_every_response(tmp_path: Path) -> None:
    config = _fixture_project(tmp_path)
    generate_demo(Project.load(config))
    checks = compile_all(load_rubrics([tmp_path / "rubrics"]))
    n_checks = sum(len(c) for c in checks.values())
    frames = {n: pd.read_parquet(tmp_path / "verdicts" / f"{n}.parquet") for n in
              ("oracle", "lenient", "partisan")}  # fmt: skip
    for frame in frames.values():
        assert list(frame.columns) == REPLAY_COLUMNS
        assert len(frame) == len(DEMO_MODELS) * 2 * n_checks
        assert not frame.duplicated(REPLAY_COLUMNS[:4]).any()
    key = REPLAY_COLUMNS[:4]
    for name in ("lenient", "partisan"):
        assert (frames[name][key] == frames["oracle"][key]).all().all()


def _random_project(
    n_per_bucket: int, seed: int = 5
) -> tuple[list[Question], dict[str, MetaRubric]]:
    rng = np.random.default_rng(seed)
    questions, rubrics = [], {}
    for i in range(3 * n_per_bucket):
        domain = DOMAINS[i % len(DOMAINS)]
        qid = f"{domain}-{i:03d}"
        questions.append(Question(
            question_id=qid, image_id=f"img-{i}", image=None, domain=domain,
            popularity=list(Popularity)[i % 3], egocentric=bool(i % 2),
            question="What is this?", text_only_question=f"What is the thing {i}?",
        ))  # fmt: skip
        rubrics[qid] = MetaRubric.model_validate(random_rubric(rng, qid, int(rng.integers(15, 30))))
    return questions, rubrics


@pytest.fixture(scope="module")
def scored() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Known labels of 60 random questions, and each response's Gamut score from them."""
    questions, rubrics = _random_project(20)
    _, labels = compose_all(questions, rubrics)
    checks = compile_all(rubrics)
    pops = {q.question_id: q.popularity.value for q in questions}
    rows = []
    for (sid, setting, qid), g in labels.groupby(["submission_id", "setting", "question_id"]):
        score = score_question(checks[qid], dict(zip(g.check_id, g.verdict, strict=True)))
        rows.append((sid, setting, qid, pops[qid], 100 * score.gamut))
    scores = pd.DataFrame(rows, columns=["sid", "setting", "qid", "popularity", "gamut"])
    return labels, scores


@pytest.mark.slow
def test_strong_model_ranks_first_in_multimodal(scored: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    _, scores = scored
    mean = scores[scores.setting == "multimodal"].groupby("sid").gamut.mean()
    assert mean.idxmax() == "quillfeather-ultra"
    assert mean.idxmin() in {"pebblewick-mini", "brassbell-bold", "lanternfish-text"}


@pytest.mark.slow
def test_image_weak_model_has_the_largest_modality_gap(
    scored: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    _, scores = scored
    by = scores.pivot_table(index="sid", columns="setting", values="gamut")
    gap = by.text_only - by.multimodal
    assert gap.idxmax() == "lanternfish-text"
    assert gap["lanternfish-text"] > 2 * gap.drop("lanternfish-text").max()


@pytest.mark.slow
def test_verdict_mix_profiles(scored: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    labels, _ = scored
    share = labels.groupby("submission_id").verdict.value_counts(normalize=True).unstack()
    assert share.contradicts.idxmax() == "brassbell-bold"
    assert share.missing.idxmax() == "hushmoth-careful"
    assert share.loc["hushmoth-careful", "contradicts"] < 0.05
    assert share.meets.idxmax() == "quillfeather-ultra"


@pytest.mark.slow
def test_head_tail_model_is_strong_on_head_and_weak_on_tail(
    scored: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    _, scores = scored
    by = scores.groupby(["sid", "popularity"]).gamut.mean().unstack()
    head_minus_tail = by["head"] - by["tail"]
    assert head_minus_tail["marigold-mainstream"] > 40
    assert head_minus_tail.idxmax() == "marigold-mainstream"


def test_judges_depart_from_the_labels_as_documented(tmp_path: Path) -> None:
    config = _fixture_project(tmp_path)
    generate_demo(Project.load(config))
    read = {n: pd.read_parquet(tmp_path / "verdicts" / f"{n}.parquet") for n in
            ("oracle", "lenient", "partisan")}  # fmt: skip
    oracle = read["oracle"]
    order = ["meets", "partially_meets", "missing", "contradicts"]
    rank = {v: i for i, v in enumerate(order)}
    for name in ("lenient", "partisan"):
        diff = oracle.verdict.map(rank) - read[name].verdict.map(rank)
        assert (diff >= 0).all(), f"{name} only ever upgrades"
        assert (diff <= 1).all()
    aurora = {m.submission_id for m in DEMO_MODELS if m.family == "aurora"}
    changed = read["partisan"].verdict != oracle.verdict
    assert not changed[~oracle.submission_id.isin(aurora)].any()
    upgradable = oracle.submission_id.isin(aurora) & (oracle.verdict != "meets")
    rate = changed[upgradable].mean()
    assert abs(rate - PARTISAN_OWN_FAMILY_UPGRADE) < 0.12
    lenient_changed = read["lenient"].verdict != oracle.verdict
    assert not lenient_changed[oracle.verdict.isin(["meets", "contradicts"])].any()
    assert lenient_changed[oracle.verdict.isin(["missing", "partially_meets"])].any()


def test_cli_demo_and_config_without_demo_judges(tmp_path: Path) -> None:
    config = _fixture_project(tmp_path)
    result = CliRunner().invoke(main, ["demo", "write", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "verdicts" / "oracle.parquet").is_file()
    text = config.read_text().replace("[judges.lenient]", "[judges.kind]")
    config.write_text(text)
    result = CliRunner().invoke(main, ["demo", "write", "--config", str(config)])
    assert result.exit_code == 1
    assert "lenient" in result.output
