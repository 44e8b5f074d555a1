"""``gamut submission check``: validation, response statistics and the judging job, calling nothing.

Also the replay judge's one line for a submission it knows nothing about (``gamut judge``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from scoring.submissions.stats import is_refusal, response_stats
from tests.demo_config import DEMO, demo_config_text
from tests.fakes.llm_server import FakeLLMServer

SID = "acme-check-1"


def test_stats_count_lengths_empty_refused_and_duplicates() -> None:
    texts = {
        "q1": "",
        "q2": "I'm sorry, I can't identify this image.",
        "q3": "The same answer here.",
        "q4": "the same answer, here",
        "q5": "A long and careful answer. " * 10,
        "q6": "Short.",
        "q7": "The dish is pad thai.",  # templated with q8: the questions' own words differ
        "q8": "The dish is ramen.",
    }
    words = {"q7": {"pad", "thai"}, "q8": {"ramen"}}
    s = response_stats(texts, words)
    assert (s.n, s.empty, s.refused) == (8, 1, 1)
    assert (s.duplicated, s.largest_duplicate_group) == (4, 2)
    assert s.length_min == 0 and s.length_max == len(texts["q5"])
    assert s.length_min <= s.length_p10 <= s.length_median <= s.length_p90 <= s.length_max
    assert "1 empty, 1 refused, 4 identical or templated (largest group 2)" in s.line()


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I’m sorry, but I can’t help with that.", True),
        ("As an AI, I cannot see images.", True),
        ("I cannot identify the plant in this photo.", True),
        ("Sorry, this image is too blurry.", True),
        ("This is pad thai. I'm sorry to say it is often too sweet.", False),
        ("Cannot be confused with tom yum: it is a curry.", False),
    ],
)
def test_refusals_are_answers_that_open_with_one(text: str, refused: bool) -> None:
    assert is_refusal(text) is refused


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the demo with one new submission the replay judges know nothing about."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO / "submissions", root / "submissions")
    text = demo_config_text().replace(f'"{(DEMO / "submissions").as_posix()}"', '"submissions"')
    text = text.replace(
        'replay = "' + (DEMO / "verdicts" / "oracle.parquet").as_posix() + '"',
        'replay = "' + (DEMO / "verdicts" / "oracle.parquet").as_posix() + '"\n'
        "price_in_per_mtok = 1.5\nprice_out_per_mtok = 6.0",
    )
    assert "price_in_per_mtok = 1.5" in text and 'submissions = "submissions"' in text
    (root / "gamut.toml").write_text(text, encoding="utf-8")
    folder = root / "submissions" / SID
    shutil.copytree(root / "submissions" / "brassbell-bold", folder)
    meta = (folder / "submission.yaml").read_text().replace("Brassbell Bold", "Acme Check")
    (folder / "submission.yaml").write_text(meta.replace("demo: true\n", ""))
    lines = (folder / "multimodal.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    rows[0]["response"] = ""
    rows[1]["response"] = "I'm sorry, I cannot identify this animal."
    rows[2]["response"] = rows[3]["response"] = rows[4]["response"] = "A bird of some kind."
    (folder / "multimodal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "text_only.jsonl").unlink()
    return root


def _run(root: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, [*args, "--config", str(root / "gamut.toml")])
    return r.exit_code, r.output


def test_check_prints_statistics_and_the_job_size_without_calling(project: Path) -> None:
    cfg = project / "gamut.toml"
    with FakeLLMServer() as llm:
        cfg.write_text(
            cfg.read_text()
            + f"""
[judges.remote]
provider = "openai"
model = "remote-judge"
base_url = "{llm.openai_base_url}"
api_key_env = "REMOTE_JUDGE_KEY_NOT_SET"
family = "remote"
price_in_per_mtok = 1.5
price_out_per_mtok = 6.0
"""
        )
        code, out = _run(project, "submission", "check", SID)
        assert llm.requests == [], "the check calls no judge"
    assert code == 0, out
    text = " ".join(out.split())
    assert "valid: acme-check-1" in text
    assert "multimodal: 42 responses;" in text and "1 empty, 1 refused" in text
    assert "3 identical or templated (largest group 3)" in text
    assert "text_only: no response file" in text
    offline = re.search(
        r"oracle \(replay:demo-oracle@[^)]*, primary\): ([\d,]+) checks, 0 already judged, "
        r"([\d,]+) of empty responses \(scored without a call\); ([\d,]+) verdicts given "
        r"offline \(replayed, else by the offline matcher\): no calls, no tokens, no cost",
        text,
    )
    assert offline, text
    m = re.search(
        r"remote \(openai:remote-judge@[^)]*\): ([\d,]+) checks, 0 already judged, "
        r"([\d,]+) of empty responses \(scored without a call\); ([\d,]+) calls, about "
        r"([\d,]+) tokens in and ([\d,]+) out; about \$([\d,.]+) at \$1.5 in / \$6 out",
        text,
    )
    assert m, text
    checks, empty, calls, tin, tout = (int(g.replace(",", "")) for g in m.groups()[:5])
    assert checks > 42 and 0 < empty < checks and calls == checks - empty
    assert tin > calls and tout > 0
    assert float(m[6].replace(",", "")) == pytest.approx((tin * 1.5 + tout * 6.0) / 1e6, abs=0.01)
    assert [int(g.replace(",", "")) for g in offline.groups()] == [checks, empty, calls]
    assert "lenient (replay:demo-lenient" in text and "nothing was called" in text


def test_check_of_an_invalid_submission_fails_and_skips_the_job(project: Path) -> None:
    meta = project / "submissions" / SID / "submission.yaml"
    meta.write_text(
        meta.read_text().replace("organisation: GAMUT demo (fictional)", "organisation: TODO")
    )
    code, out = _run(project, "submission", "check", SID)
    assert code == 1
    assert "organisation is still TODO" in out and "not sized: fix the errors above first" in out
    assert "multimodal: 42 responses" in out


def test_a_replay_judge_that_knows_none_of_the_checks_says_so_once(project: Path) -> None:
    cfg = project / "gamut.toml"
    text = cfg.read_text(encoding="utf-8")
    assert 'unrecorded = "offline-match"' in text
    cfg.write_text(text.replace('unrecorded = "offline-match"', 'unrecorded = "fail"'))
    r = CliRunner().invoke(
        main, ["judge", "--submission", SID, "--config", str(project / "gamut.toml")]
    )
    assert r.exit_code == 1
    lines = r.output.splitlines()
    for name in ("oracle", "lenient", "partisan"):
        (line,) = [ln for ln in lines if f"replay judge '{name}'" in ln]
        assert (
            f"checks of submission '{SID}'" in line
            and "knows none of the" in line
            and "real judge" in line
        )
    assert not any("no stored verdict" in ln for ln in lines), "one line per judge, not per check"
    assert "a replay judge cannot retry them" in r.output and "again to retry" not in r.output
    assert 'unrecorded = "offline-match"' in r.output
    assert len(lines) < 15
