"""Every leaderboard row is stamped with what judged it; a row judged under an older rubric or
another judge model than the current config's is stale, with the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring import __version__
from scoring.judge.prompt import load_template
from scoring.tables import dictionary
from scoring.tables.stamps import STAMP_COLUMNS, UNRECORDED, read_stamps, short_version

DEMO = Path(__file__).resolve().parents[2] / "demo"


def _project(root: Path, **replace: str) -> Project:
    cfg = root / "demo" / "gamut.toml"
    text = cfg.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    cfg.write_text(text, encoding="utf-8")
    return Project(load_config(cfg))


def _edit_rubric(root: Path, qid: str) -> None:
    path = root / "demo" / "rubrics" / f"{qid}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    item = next(i for i in data["items"] if i.get("text"))
    item["text"] = item["text"] + " (revised)"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.slow
def test_rows_are_stamped_and_stale_after_a_change_without_rejudging(tmp_path: Path) -> None:
    shutil.copytree(DEMO, tmp_path / "demo")
    project = _project(tmp_path, **{'audit_simulated = true': 'audit_simulated = true\n'
                                    'benchmark_version = "2026.1"'})  # fmt: skip
    fresh = pipeline.run(project, site=False).tables.leaderboard
    template = load_template("v1")
    judged = fresh[fresh["n_checks_missing"] < fresh["n_checks"]]
    assert len(judged) == len(fresh) > 0
    assert not fresh["stale"].any() and fresh["stale_reason"].isna().all()
    assert set(fresh["rubric_version"]) == {project.check_table.rubric_version}
    assert set(fresh["benchmark_version"]) == {"2026.1"}
    assert set(fresh["engine_version"]) == {__version__}
    assert set(fresh["prompt_version"]) == {template.version}
    assert set(fresh["prompt_digest"]) == {template.digest}
    models = {j: c.model for j, c in project.cfg.judges.items()}
    assert all(r.judge_model == models[str(r.judge)] for r in fresh.itertuples())
    # the record is in the verdict table, and the published files carry the columns
    assert read_stamps(project.verdict_table) is not None
    written = pq.read_table(project.results / "leaderboard.parquet").column_names
    assert set(STAMP_COLUMNS) <= set(written)
    assert "stale_reason" in (project.results / "leaderboard.csv").read_text().splitlines()[0]
    assert set(dictionary("leaderboard", STAMP_COLUMNS)) == set(STAMP_COLUMNS)

    # one question's rubric changes; the old verdict table is scored again without rejudging
    old_version = project.check_table.rubric_version
    _edit_rubric(tmp_path, "animals-0001")
    project = Project(load_config(tmp_path / "demo" / "gamut.toml"))
    assert project.check_table.rubric_version != old_version
    stale = pipeline.score(project).leaderboard
    assert stale["stale"].all()
    assert all(
        short_version(old_version) in r and "rubric version" in r for r in stale["stale_reason"]
    )
    assert set(stale["rubric_version"]) == {old_version}

    # a judge's model changes too: only that judge's rows say so
    project = _project(tmp_path, **{'model = "demo-lenient"': 'model = "demo-lenient-2"'})
    both = pipeline.score(project).leaderboard
    lenient = both["judge"] == "lenient"
    assert (
        both.loc[lenient, "stale_reason"]
        .str.contains("judged by model demo-lenient, configured now demo-lenient-2")
        .all()
    )
    assert not both.loc[~lenient, "stale_reason"].str.contains("model").any()

    # a fresh run judges what changed: no row is stale
    again = pipeline.run(project, site=False).tables.leaderboard
    assert not again["stale"].any()
    assert set(again["rubric_version"]) == {project.check_table.rubric_version}
    assert set(again.loc[again["judge"] == "lenient", "judge_model"]) == {"demo-lenient-2"}


def test_a_table_without_a_record_is_neither_stale_nor_fresh(tmp_path: Path) -> None:
    from tests.tables.conftest import main_project

    project = Project(load_config(main_project().write(tmp_path)))  # its verdicts written directly
    lb = pipeline.score(project).leaderboard
    assert lb["stale"].isna().all()
    assert set(lb["stale_reason"]) == {UNRECORDED}
    assert lb["rubric_version"].isna().all()


def test_a_new_prompt_template_makes_the_rows_it_judged_stale() -> None:
    import pandas as pd

    from scoring.tables.stamps import Current, stamp

    judged = {"model": "m", "prompt_version": "v1", "prompt_digest": "aaaa", "snapshots": {}}
    recorded = {"rubric_version": "sha256:r1", "judges": {"j1": judged, "j2": judged}}
    now = Current(
        "sha256:r1",
        None,
        {
            "j1": {"model": "m", "prompt_template": "v1", "prompt_digest": "bbbb"},
            "j2": {"model": "m", "prompt_template": "v1", "prompt_digest": "aaaa"},
        },
    )
    lb = pd.DataFrame(
        {
            "submission_id": ["a", "a", "b"],
            "setting": ["multimodal"] * 3,
            "judge": ["j1", "j2", "j2"],
            "n_checks_missing": [0, 0, 10],
            "n_checks": [10, 10, 10],
        }
    )
    out = stamp(lb, recorded, now)
    assert out["stale"].tolist() == [True, False, False]  # b has no verdict: nothing to be stale
    assert out.loc[0, "stale_reason"] == (
        "judged with prompt v1 (template aaaa), now v1 (template bbbb)"
    )
    assert out["judge_model"].isna().tolist() == [False, False, True]
    assert out["stale_reason"].isna().tolist() == [False, True, True]


def test_gamut_score_says_which_rows_are_stale_and_why(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gamut.cli import main

    shutil.copytree(DEMO, tmp_path / "demo")
    config = tmp_path / "demo" / "gamut.toml"
    first = CliRunner().invoke(main, ["run", "--config", str(config), "--no-site"])
    assert first.exit_code == 0, first.output
    assert "stale: " not in first.output
    _project(tmp_path, **{'model = "demo-lenient"': 'model = "demo-lenient-2"'})
    again = CliRunner().invoke(main, ["score", "--config", str(config)])
    assert again.exit_code == 0, again.output
    assert (
        "stale: 12 leaderboard row(s) judged by model demo-lenient, configured now "
        "demo-lenient-2 (run `gamut judge` to judge them again)"
    ) in again.output
