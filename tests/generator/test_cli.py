"""`gamut site build | serve` and `gamut run`, through the command line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.demo_config import demo_config_text
from tests.generator.conftest import REPO, assert_no_check_text, assert_no_rubric_text
from tests.generator.fixture_tables import write_fixture_config


def test_every_site_command_has_help() -> None:
    runner = CliRunner()
    for args in (["site"], ["site", "build"], ["site", "serve"], ["run"]):
        result = runner.invoke(main, [*args, "--help"])
        assert result.exit_code == 0, args
        body = result.output.split("Options:")[0]
        assert len(body.strip().splitlines()) >= 2, args
        for line in result.output.split("Options:")[1].splitlines():
            if line.strip().startswith("--") and "--help" not in line:
                assert len(line.split("  ")) > 1 or line.strip().endswith("."), line


@pytest.mark.slow
def test_site_build_prints_where_the_site_is(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    result = CliRunner().invoke(main, ["site", "build", "--config", str(cfg)])
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "site" / "index.html") in result.output.replace("\n", "")
    assert (tmp_path / "site" / "index.html").is_file()


def test_site_build_without_score_tables_exits_1(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    shutil.rmtree(tmp_path / "results")
    (tmp_path / "results").mkdir()
    result = CliRunner().invoke(main, ["site", "build", "--config", str(cfg)])
    assert result.exit_code == 1
    assert "gamut score" in result.output
    assert "Traceback" not in result.output


def test_site_serve_bad_port_is_a_usage_error(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    result = CliRunner().invoke(main, ["site", "serve", "--config", str(cfg), "--port", "70000"])
    assert result.exit_code == 2


@pytest.mark.slow
def test_site_serve_serves_the_built_site(tmp_path: Path) -> None:
    cfg = write_fixture_config(tmp_path, rubrics_public=False)
    assert CliRunner().invoke(main, ["site", "build", "--config", str(cfg)]).exit_code == 0
    proc = subprocess.Popen(
        [sys.executable, "-c", "from gamut.cli import main; main()", "site", "serve",
         "--config", str(cfg), "--no-build", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0) + "index.html", timeout=10) as resp:
            assert resp.status == 200
            assert b"Leaderboard" in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_gamut_run_on_the_demo_with_held_rubrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main job end to end on the shipped demo (outputs redirected into a temporary folder),
    with the rubrics marked held: no rubric text may reach the built site."""
    assert (REPO / "demo" / "submissions").is_dir(), (
        "demo data missing: run gamut-workbench demo write"
    )
    text = demo_config_text().replace("rubrics_public = true", "rubrics_public = false")
    text = text.replace("[store]\n", '[store]\nledger_key_env = "GAMUT_TEST_LEDGER_KEY"\n', 1)
    assert "rubrics_public = false" in text and "ledger_key_env" in text
    monkeypatch.setenv("GAMUT_TEST_LEDGER_KEY", "held-demo-ledger-secret-0123456789abcdef")
    (tmp_path / "gamut.toml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["run", "--config", str(tmp_path / "gamut.toml")])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert str(tmp_path / "site") in out and "gamut site serve" in out
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "downloads" / "verdicts.parquet").is_file()
    public = (REPO / "demo" / "questions.jsonl", *(REPO / "demo" / "submissions").rglob("*.jsonl"))
    assert assert_no_rubric_text(site, public) > 20
    assert assert_no_check_text(site, public) > 200
    # the audit's pages and tables are among what was scanned: ids and counts only
    assert "Judge vs human" in (site / "judges.html").read_text(encoding="utf-8")
    assert "Corrected (PPI)" in (site / "index.html").read_text(encoding="utf-8")
    assert {"judge_human", "human_human"} <= {p.stem for p in (site / "downloads").glob("*.csv")}
    assert assert_no_check_text(tmp_path / "results", public) > 200  # the audit tables too
    assert len(list((site / "explorer" / "q").glob("*.js"))) == 42
    assert not list(site.rglob("*.rationales.js"))


@pytest.mark.slow
def test_gamut_run_with_judge_failures_builds_the_site_and_exits_1(tmp_path: Path) -> None:
    """A judge that cannot answer for one submission: that submission is shown as incomplete,
    the site is still built, and the command exits 1 so that a rerun retries."""
    assert (REPO / "demo" / "submissions").is_dir(), (
        "demo data missing: run gamut-workbench demo write"
    )
    import pandas as pd

    oracle = pd.read_parquet(REPO / "demo" / "verdicts" / "oracle.parquet")
    dropped = str(oracle["submission_id"].iloc[0])
    oracle[oracle["submission_id"] != dropped].to_parquet(tmp_path / "oracle.parquet")
    text = demo_config_text()
    text = text.replace(f'"{REPO / "demo"}/verdicts/oracle.parquet"', '"oracle.parquet"')
    assert '"oracle.parquet"' in text
    # the oracle fails what its file does not hold (the demo's offline matcher would answer it)
    text = text.replace(
        'replay = "oracle.parquet"\nunrecorded = "offline-match"',
        'replay = "oracle.parquet"\nunrecorded = "fail"',
    )
    assert 'unrecorded = "fail"' in text
    (tmp_path / "gamut.toml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["run", "--config", str(tmp_path / "gamut.toml")])
    assert result.exit_code == 1, result.output
    assert "A replay judge cannot retry them" in result.output and "Traceback" not in result.output
    assert "knows none of the" in result.output and 'unrecorded = "offline-match"' in result.output
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'data-setting="multimodal"[^>]*>.*?>incomplete</td>', index)
