"""The paper-scale writer at small size: a project every stage of the engine accepts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from gamut.config import load_config
from scoring.questions import load_questions
from scoring.rubric_io import compile_all, load_rubrics
from scoring.submissions.formats import SubmissionMeta
from scoring.verdicts import VERDICT_COLUMNS
from workbench.cli import main
from workbench.synthetic.paper import write_paper_scale

KEY = ["submission_id", "setting", "judge", "question_id", "check_id"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paper")
    return write_paper_scale(out, n_questions=30, n_models=3, seed=7)


def test_config_questions_and_rubrics_load(project: Path) -> None:
    cfg = load_config(project)
    assert cfg.primary_judge == "atlas"
    assert {j.provider for j in cfg.judges.values()} == {"replay"}
    assert len({j.family for j in cfg.judges.values()}) == 3
    for judge in cfg.judges.values():
        assert judge.replay is not None and cfg.path(judge.replay).is_file()
    questions = load_questions(cfg.path(cfg.benchmark.questions))
    assert len(questions) == 30
    assert len({q.domain for q in questions}) == 10
    assert {q.popularity.value for q in questions} == {"head", "torso", "tail"}
    rubrics = load_rubrics([cfg.path(Path(cfg.benchmark.rubrics))])
    assert sorted(rubrics) == sorted(q.question_id for q in questions)
    types = {item.type for r in rubrics.values() for item in r.items}
    assert types == {"fact", "strict_list", "flexible_list", "process", "relationship"}
    mean = sum(len(c) for c in compile_all(rubrics).values()) / len(rubrics)
    assert 30 <= mean <= 40


def test_submissions_are_valid_and_complete(project: Path) -> None:
    cfg = load_config(project)
    qids = {q.question_id for q in load_questions(cfg.path(cfg.benchmark.questions))}
    folders = sorted(cfg.path(cfg.benchmark.submissions).iterdir())
    assert len(folders) == 3
    for folder in folders:
        meta = SubmissionMeta.model_validate(
            yaml.safe_load((folder / "submission.yaml").read_text())
        )
        assert meta.demo
        for setting in ("multimodal", "text_only"):
            lines = pd.read_json(folder / f"{setting}.jsonl", lines=True)
            assert set(lines.question_id) == qids and len(lines) == len(qids)
            assert (lines.response.str.len() > 0).all()


def test_verdict_table_has_one_row_per_submission_setting_judge_check(project: Path) -> None:
    cfg = load_config(project)
    checks = compile_all(load_rubrics([cfg.path(Path(cfg.benchmark.rubrics))]))
    table = pd.read_parquet(cfg.path(cfg.store.results) / "verdicts.parquet")
    assert tuple(table.columns) == VERDICT_COLUMNS
    assert not table.duplicated(KEY).any()
    n_checks = sum(len(c) for c in checks.values())
    assert len(table) == 3 * 2 * 3 * n_checks
    expected = {(c.question_id, c.check_id, c.kind.value, c.tier.value, c.secondary)
                for cs in checks.values() for c in cs}  # fmt: skip
    cols = ["question_id", "check_id", "kind", "tier", "secondary"]
    got = set(table[cols].astype(object).itertuples(index=False, name=None))
    assert got == expected
    assert set(table.verdict.astype(str)) == {"meets", "partially_meets", "missing", "contradicts"}


def test_replay_files_match_the_verdict_table(project: Path) -> None:
    cfg = load_config(project)
    table = pd.read_parquet(cfg.path(cfg.store.results) / "verdicts.parquet")
    for name, judge in cfg.judges.items():
        assert judge.replay is not None
        replay = pd.read_parquet(cfg.path(judge.replay))
        assert list(replay.columns) == [
            "submission_id", "setting", "question_id", "check_id", "verdict", "rationale",
        ]  # fmt: skip
        mine = table[table.judge == name].drop(columns="judge").astype(str)
        merged = mine.merge(replay.astype(str), on=KEY[:2] + KEY[3:], suffixes=("", "_r"))
        assert len(merged) == len(replay) == len(mine)
        assert (merged.verdict == merged.verdict_r).all()


def test_lenient_judge_is_more_lenient_than_primary(project: Path) -> None:
    cfg = load_config(project)
    table = pd.read_parquet(cfg.path(cfg.store.results) / "verdicts.parquet")
    share = table.assign(m=table.verdict == "meets").groupby("judge", observed=True).m.mean()
    assert share["birch"] > share["atlas"]


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = write_paper_scale(tmp_path / "a", n_questions=12, n_models=2, seed=3).parent
    b = write_paper_scale(tmp_path / "b", n_questions=12, n_models=2, seed=3).parent
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_cli_writes_a_project(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "paper",
            "--out",
            str(tmp_path),
            "--questions",
            "5",
            "--models",
            "2",
            "--judges",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(load_config(tmp_path / "gamut.toml").judges) == 2
