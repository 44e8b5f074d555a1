"""A config without [judges] serves every command that neither judges nor scores; the others
refuse it, naming the config file actually given."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gamut.cli import main
from tests.submissions.helpers import CONFIG, FIXTURES, GOOD_META, Project


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "questions.jsonl").write_bytes((FIXTURES / "questions.jsonl").read_bytes())
    (root / "rubrics").mkdir()
    (root / "submissions").mkdir()
    config = root / "submitter.toml"  # not the default name: messages must name it
    config.write_text(CONFIG.split("[judges.fake]")[0], encoding="utf-8")
    Project(root).write("acme", meta=GOOD_META)
    return config


def test_submitter_commands_need_no_judges(tmp_path: Path) -> None:
    config = _project(tmp_path)
    runner = CliRunner()
    validate = runner.invoke(main, ["submission", "validate", "--config", str(config)])
    assert validate.exit_code == 0, validate.output
    out = tmp_path / "questions.jsonl"
    export = runner.invoke(
        main, ["questions", "export", "--setting", "multimodal", "--out", str(out),
               "--config", str(config)],
    )  # fmt: skip
    assert export.exit_code == 0, export.output
    assert out.read_text().count("\n") > 0


def test_judging_commands_name_the_config_that_lacks_judges(tmp_path: Path) -> None:
    config = _project(tmp_path)
    for args in (["judge"], ["score"], ["run"]):
        result = CliRunner().invoke(main, [*args, "--config", str(config)])
        assert result.exit_code == 1, (args, result.output)
        assert str(config) in result.output and "[judges.NAME]" in result.output, result.output
        assert "Traceback" not in result.output


def test_gamut_config_variable_picks_the_file(tmp_path: Path) -> None:
    config = _project(tmp_path)
    result = CliRunner().invoke(main, ["submission", "validate"], env={"GAMUT_CONFIG": str(config)})
    assert result.exit_code == 0, result.output
    assert "valid: acme" in result.output
