"""A submitter's whole path on the demo, offline, as one play-through of the command line.

``submission new`` -> ``generate`` (against a fake model server on 127.0.0.1) -> ``validate`` ->
``check`` -> ``judge`` -> ``comment`` -> ``run``, each command taken as the previous one printed
it (its hint run as it is, from the folder the submitter works in), until the new model is on the
leaderboard, complete, in both settings and for every judge.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner, Result

from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from gamut.publish import publish_files
from tests.demo_config import DEMO
from tests.fakes.llm_server import FakeLLMServer, prompt_text

SID = "acme-rehearsal"
CFG = "--config demo/gamut.toml"
KEY_ENV = "GAMUT_PLAY_KEY"


def _responder(body: dict[str, object]) -> str:
    """A model that answers by restating what it was asked (the text-only form names the
    entity, so the offline matcher finds some of the rubric's words)."""
    return "It is what you ask about: " + prompt_text(body).splitlines()[-1]


def _gamut(command: str) -> Result:
    """Run a printed ``gamut ...`` command line as it is."""
    argv = shlex.split(command)
    assert argv[0] == "gamut", command
    return CliRunner().invoke(main, argv[1:], catch_exceptions=False)


def _hint(output: str, pattern: str) -> str:
    """The one ``gamut ...`` command of ``output`` that matches ``pattern``."""
    found = re.findall(r"(gamut [^`\n]*?)(?:`|\n|$)", output)
    picked = [c.strip() for c in found if re.search(pattern, c)]
    assert len(picked) == 1, (pattern, found)
    return picked[0]


@pytest.mark.slow
def test_a_new_submission_goes_from_new_to_the_leaderboard_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DEMO, tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-play-not-a-real-key")
    monkeypatch.delenv("GAMUT_CONFIG", raising=False)
    t0 = time.perf_counter()

    new = _gamut(f"gamut submission new {SID} {CFG}")
    assert new.exit_code == 0, new.output
    steps = [c for c in re.findall(r"(gamut [^`\n(]*)", new.output) if "questions export" not in c]
    assert steps and all(CFG in c for c in steps), new.output
    assert "open a pull request" not in new.output, "on the demo, the next step is a rehearsal"

    with FakeLLMServer(responder=_responder) as llm:
        generate = _hint(new.output, r"gamut generate").replace("MODEL", "acme-vl")
        gen = _gamut(f"{generate} --base-url {llm.openai_base_url} --api-key-env {KEY_ENV}")
        assert gen.exit_code == 0, gen.output
        assert len(llm.requests) == 2 * 42
    assert "42 answered now" in gen.output
    todo_hint = gen.output.strip().splitlines()[-1]
    assert todo_hint.startswith("next: replace the TODO values of model_name, "), todo_hint
    assert f"demo/submissions/{SID}/submission.yaml" in todo_hint

    # the submitter fills in what generate could not know
    meta = tmp_path / "demo" / "submissions" / SID / "submission.yaml"
    data = yaml.safe_load(meta.read_text(encoding="utf-8"))
    data.update(
        model_name="Acme VL Rehearsal",
        organisation="Acme (fictional)",
        model_family="acme",
        link="https://example.org/acme-vl",
        open_weights=False,
        contact="@acme",
    )
    meta.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    validate = _gamut(_hint(todo_hint, r"submission validate"))
    assert validate.exit_code == 0, validate.output
    assert f"valid: {SID}" in validate.output
    shown = [ln.split(":", 1)[0] for ln in validate.output.splitlines() if ".jsonl:" in ln]
    assert all(p.startswith(f"demo/submissions/{SID}/") for p in shown), validate.output

    check = _gamut(_hint(new.output, r"submission check"))
    assert check.exit_code == 0, check.output
    for judge in ("oracle", "lenient", "partisan"):
        (line,) = [ln for ln in check.output.splitlines() if ln.strip().startswith(judge)]
        assert "given offline" in line and "no calls, no tokens" in line, line

    dry = _gamut(f"gamut judge --submission {SID} --dry-run {CFG}")
    assert dry.exit_code == 0, dry.output
    assert "dry run: 0 call(s) would be made (" in dry.output

    judged = _gamut(f"gamut judge --submission {SID} {CFG}")
    assert judged.exit_code == 0, judged.output
    assert " 0 failed" in judged.output and "rejected" not in judged.output

    comment_cmd = f"gamut comment --submission {SID} --out comment.md {CFG}"
    early = _gamut(comment_cmd)
    assert early.exit_code == 1, "the comment is rendered from the score tables"
    score = _gamut(_hint(early.output, r"gamut score"))
    assert score.exit_code == 0, score.output
    comment = _gamut(comment_cmd)
    assert comment.exit_code == 0, comment.output
    text = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert f"`{SID}`" in text and "| complete |" in text and "incomplete" not in text

    run = _gamut(_hint(new.output, r"gamut run"))
    elapsed = time.perf_counter() - t0
    assert run.exit_code == 0, run.output
    board = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    mine = board[board["submission_id"] == SID]
    assert len(mine) == 2 * 3, "both settings, every judge"
    assert set(mine["status"]) == {"complete"} and mine["rank"].notna().all()
    assert (mine["n_checks_missing"] == 0).all()
    # generate recorded the local server's token counts; the offline judges record none
    assert (mine["model_tokens_recorded"] == 1.0).all() and (mine["model_tokens_in"] > 0).all()
    assert (mine["judge_tokens_recorded"] == 0.0).all() and mine["judge_cost_usd"].isna().all()
    page = (tmp_path / "site" / "submissions" / f"{SID}.html").read_text(encoding="utf-8")
    assert "not recorded (replayed verdicts)" in page and "$0." not in page
    assert "Acme VL Rehearsal" in page and "offline matcher" in page
    assert "offline matcher" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "gamut site serve --config demo/gamut.toml" in run.output

    # a second generate answers nothing new, and its hint no longer speaks of TODO values
    again = _gamut(generate + f" --base-url http://127.0.0.1:9/v1 --api-key-env {KEY_ENV}")
    assert again.exit_code == 0, again.output
    last = again.output.strip().splitlines()[-1]
    assert last == f"next: run `gamut submission validate demo/submissions/{SID} {CFG}`", last
    # the Hub dataset carries the same responses as the site's download
    cfg = load_config(tmp_path / "demo" / "gamut.toml")
    hub = {f.path_in_repo: f.data for f in publish_files(Project(cfg), "gamut-org/gamut-results")}
    on_hub = pq.read_table(io.BytesIO(hub["responses.parquet"]))
    on_site = pq.read_table(tmp_path / "site" / "downloads" / "responses.parquet")
    assert on_hub.equals(on_site) and SID in on_site.column("submission_id").to_pylist()
    # and the export, the site and the Hub give a verdict the same columns
    exported = _gamut(f"gamut export verdicts --out verdicts.parquet {CFG}")
    assert exported.exit_code == 0, exported.output
    names = pq.read_schema(tmp_path / "verdicts.parquet").names
    assert names == pq.read_schema(tmp_path / "site" / "downloads" / "verdicts.parquet").names
    hub_verdicts = pq.read_table(io.BytesIO(hub[f"verdicts/{SID}.parquet"]))
    assert names == hub_verdicts.column_names and "domain" in names
    meta = pq.read_schema(tmp_path / "verdicts.parquet").metadata
    stamped = json.loads(meta[b"gamut.provenance"])
    published = json.loads((tmp_path / "site" / "downloads" / "provenance.json").read_text())
    for key in ("rubric_version", "judges", "engine_version", "primary_judge"):
        assert stamped[key] == published[key], key
    with capsys.disabled():
        print(f"\nplay-through on the demo: {elapsed:.1f} s from `submission new` to `run`")
