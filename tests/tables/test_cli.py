"""``gamut score`` through click's runner."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gamut.cli import main
from scoring.tables.registry import score_tables
from tests.tables.conftest import main_project, main_verdict


def test_score_prints_the_primary_leaderboard_and_writes_files(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    result = CliRunner().invoke(main, ["score", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "multimodal, judge j1" in result.output
    assert result.output.index("Alpha") < result.output.index("Beta")  # ranked order
    assert "41.1" in result.output  # alpha's hand-computed Gamut score
    # every registered table in three formats but question_scores (one file), and provenance
    assert f"wrote {3 * (len(score_tables()) - 1) + 2} files" in result.output
    assert (tmp_path / "results" / "leaderboard.csv").is_file()


def test_score_lists_incomplete_submissions(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
        return (
            None
            if (sub, judge, cid) == ("beta", "j1", "I1")
            else main_verdict(sub, setting, judge, qid, cid)
        )

    config = main_project(verdict=verdict).write(tmp_path)
    result = CliRunner().invoke(main, ["score", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "incomplete: beta (multimodal, judge j1): 3 of 11 checks have no verdict" in (
        result.output
    )


def test_score_exits_1_without_a_verdict_table(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    (tmp_path / "results" / "verdicts.parquet").unlink()
    result = CliRunner().invoke(main, ["score", "--config", str(config)])
    assert result.exit_code == 1
    assert "gamut judge" in result.output


def test_score_usage_error_exits_2() -> None:
    result = CliRunner().invoke(main, ["score", "--no-such-option"])
    assert result.exit_code == 2
    assert "--config" in CliRunner().invoke(main, ["score", "--help"]).output
