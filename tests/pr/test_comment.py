"""The sticky PR comment, rendered from small score tables written to a temporary results/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from gamut.cli import main
from gamut.comment import (
    MARKER,
    escape,
    failure_causes,
    read_warnings,
    render_comment,
    submission_url,
)
from gamut.config import GamutConfig, load_config
from gamut.project import Project
from scoring.errors import GamutError
from scoring.ledger import FailureRecord, KeyScheme, Ledger
from tests.hub.conftest import write_config


def _row(
    sid: str, setting: str, judge: str, gamut: float, rank: int | None, status: str = "complete"
) -> dict[str, object]:
    return {
        "submission_id": sid, "setting": setting, "judge": judge, "primary": judge == "j1",
        "status": status, "n_questions": 12, "n_checks_missing": 0 if status == "complete" else 7,
        "gamut": gamut, "gamut_lo": gamut - 3, "gamut_hi": gamut + 3,
        "ac": gamut + 5, "ac_lo": gamut + 1, "ac_hi": gamut + 9,
        "v": gamut - 5, "v_lo": gamut - 9, "v_hi": gamut - 1,
        "c": np.nan, "c_lo": np.nan, "c_hi": np.nan,
        "share_meets": 0.5, "share_partial": 0.2, "share_missing": 0.2, "share_contradicts": 0.1,
        "rank": rank, "rank_lo": rank, "rank_hi": None if rank is None else rank + 1,
        "text_only": 50.0, "gap": 8.25, "gap_lo": 2.0, "gap_hi": 14.5,
        "model_name": "Aurora <b>@everyone</b>", "organisation": "Lab", "demo": False,
    }  # fmt: skip


@pytest.fixture
def cfg(tmp_path: Path) -> GamutConfig:
    res = tmp_path / "results"
    res.mkdir()
    rows = [
        _row("new-model", "multimodal", "j1", 41.75, 2),
        _row("new-model", "text_only", "j1", 50.0, 1),
        _row("old-model", "multimodal", "j1", 60.0, 1),
        _row("old-model", "text_only", "j1", 45.0, 2),
        _row("half-done", "multimodal", "j1", np.nan, None, status="incomplete"),
        _row("new-model", "multimodal", "j2", 39.0, 1),
    ]
    board = pd.DataFrame(rows)
    board["submission_id"] = board["submission_id"].astype("category")
    board["rank"] = board["rank"].astype("Int64")
    board.to_parquet(res / "leaderboard.parquet")
    dom = pd.DataFrame([
        {"submission_id": "new-model", "setting": s, "judge": "j1", "domain": d,
         "n_questions": 6, "gamut": g, "gamut_lo": g - 4, "gamut_hi": g + 4,
         "ac": g, "v": g, "c": g}
        for s, d, g in [("multimodal", "food", 30.0), ("multimodal", "plants", 52.5),
                        ("text_only", "food", 48.0)]
    ])  # fmt: skip
    dom.to_parquet(res / "by_domain.parquet")
    (res / "provenance.json").write_text(json.dumps({
        "primary_judge": "j1", "rubric_version": "rv-1234",
        "judges": {"j1": {"model": "judge-model-1"}},
    }))  # fmt: skip
    return load_config(write_config(tmp_path, "rubrics"))


def test_scores_ranks_tiers_and_gap(cfg: GamutConfig) -> None:
    md = render_comment(Project(cfg), "new-model")
    assert md.startswith(MARKER + "\n")
    assert "| multimodal | **41.8 [38.8, 44.8]** | 2 of 2 (CI 2–3) | 46.8 [42.8, 50.8] |" in md
    assert "| text_only | **50.0 [47.0, 53.0]** | 1 of 2 (CI 1–2) |" in md
    assert "+8.2 [+2.0, +14.5]" in md or "+8.3 [+2.0, +14.5]" in md
    assert "meets 50%, partially meets 20%, missing 20%, contradicts 10%" in md
    assert "rubric version `rv-1234`" in md and "`judge-model-1`" in md


def test_per_domain_table_and_other_judges(cfg: GamutConfig) -> None:
    md = render_comment(Project(cfg), "new-model")
    assert "| domain | questions | multimodal | text_only |" in md
    assert "| food | 6 | 30.0 [26.0, 34.0] | 48.0 [44.0, 52.0] |" in md
    assert "| plants | 6 | 52.5 [48.5, 56.5] | – |" in md
    assert "| `j2` | multimodal | 39.0 [36.0, 42.0] | complete |" in md


def test_the_judging_cost_is_summed_over_the_recorded_rows(cfg: GamutConfig) -> None:
    res = Project(cfg).results
    board = pd.read_parquet(res / "leaderboard.parquet")
    assert "Judging cost" not in render_comment(Project(cfg), "new-model")  # no cost columns
    mine = board["submission_id"] == "new-model"  # three rows: two settings of j1, one of j2
    board["judge_calls"] = np.where(mine, 100.0, np.nan)
    board["judge_tokens_in"] = np.where(mine, 20_000.0, np.nan)
    board["judge_tokens_cached"] = np.where(mine, 5_000.0, np.nan)
    board["judge_tokens_out"] = np.where(mine, 1_500.0, np.nan)
    board["judge_cost_usd"] = np.where(mine, 0.125, np.nan)
    board.to_parquet(res / "leaderboard.parquet")
    md = render_comment(Project(cfg), "new-model")
    assert (
        "Judging cost, every judge and setting: 300 calls, 60,000 tokens in (15,000 cached), "
        "4,500 out, $0.38 at the configured prices."
    ) in md
    board.loc[mine & (board["judge"] == "j2"), ["judge_calls", "judge_cost_usd"]] = np.nan
    board.loc[mine & (board["setting"] == "text_only"), "judge_cost_usd"] = np.nan  # unpriced
    board.to_parquet(res / "leaderboard.parquet")
    md = render_comment(Project(cfg), "new-model")
    assert "Judging cost, every judge and setting (2 of 3 rows recorded): 200 calls" in md
    assert "4,500 out" not in md and "$" not in md.split("Judging cost")[1].split("\n")[0]
    board["judge_calls"] = np.nan  # replayed verdicts record no tokens: said, never $0
    board.to_parquet(res / "leaderboard.parquet")
    assert "Judging cost: not recorded (replayed or offline verdicts)." in render_comment(
        Project(cfg), "new-model"
    )


def test_incomplete_submission_has_no_rank(cfg: GamutConfig) -> None:
    md = render_comment(Project(cfg), "half-done")
    assert "incomplete (7 checks without verdict)" in md
    assert "| multimodal | **–** | – |" in md


def test_untrusted_text_is_inert(cfg: GamutConfig) -> None:
    warnings = [{"file": "submissions/new-model/multimodal.jsonl", "line": 4,
                 "severity": "warning", "message": "text to the judge: <!-- x --> @maintainer",
                 "fix": "see [this](https://evil.example)"}]  # fmt: skip
    md = render_comment(Project(cfg), "new-model", warnings)
    assert "<b>" not in md and "@everyone" not in md and "@maintainer" not in md
    assert md.count("<!--") == 1 and "https://evil" not in md
    assert "submissions/new-model/multimodal.jsonl:4" in md
    assert escape("a|b`c") == "a\\|b\\`c"


def test_warnings_file_keeps_only_warnings(tmp_path: Path) -> None:
    f = tmp_path / "v.json"
    f.write_text(json.dumps({"ok": True, "problems": [
        {"file": "a", "line": 1, "severity": "error", "message": "bad"},
        {"file": "b", "line": 2, "severity": "warning", "message": "odd"}]}))  # fmt: skip
    assert [w["message"] for w in read_warnings(f)] == ["odd"]
    f.write_text('{"problems": 3}')
    with pytest.raises(GamutError, match="not a validator report"):
        read_warnings(f)


def test_unknown_submission_and_missing_tables(cfg: GamutConfig, tmp_path: Path) -> None:
    with pytest.raises(GamutError, match="gamut judge"):
        render_comment(Project(cfg), "nobody")
    (tmp_path / "results" / "leaderboard.parquet").unlink()
    with pytest.raises(GamutError, match="gamut score"):
        render_comment(Project(cfg), "new-model")


def test_cli_writes_the_file(cfg: GamutConfig, tmp_path: Path) -> None:
    out = tmp_path / "c" / "comment.md"
    r = CliRunner().invoke(main, ["comment", "--config", str(tmp_path / "gamut.toml"),
                                  "--submission", "new-model", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith(MARKER)
    r = CliRunner().invoke(main, ["comment", "--config", str(tmp_path / "gamut.toml"),
                                  "--submission", "nobody", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 1


def test_judging_progress_while_batches_are_in_flight(cfg: GamutConfig, tmp_path: Path) -> None:
    status = tmp_path / "judging.json"
    status.write_text(json.dumps({"submissions": {
        "half-done": {"checks": 700, "done": 250, "in_flight": 450, "failed": 0},
        "queued": {"checks": 70, "done": 0, "in_flight": 70, "failed": 0},
        "new-model": {"checks": 70, "done": 70, "in_flight": 0, "failed": 0},
    }}))  # fmt: skip
    from gamut.comment import read_judging

    half = render_comment(Project(cfg), "half-done", [], judging=read_judging(status, "half-done"))
    assert "judging: 250 of 700 checks done" in half and "450 in provider batches" in half
    assert half.startswith(MARKER) and "incomplete" in half
    queued = render_comment(Project(cfg), "queued", [], judging=read_judging(status, "queued"))
    assert queued.startswith(MARKER) and "judging: 0 of 70 checks done" in queued
    done = render_comment(Project(cfg), "new-model", [], judging=read_judging(status, "new-model"))
    assert "judging:" not in done  # finished: the plain score comment
    with pytest.raises(GamutError, match="no row"):
        render_comment(Project(cfg), "queued", [])  # without progress it is an error, as before
    out = tmp_path / "c.md"
    args = ["comment", "--config", str(cfg.file), "--submission", "half-done"]
    r = CliRunner().invoke(main, [*args, "--judging", str(status), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "judging: 250 of 700 checks done" in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(GamutError, match="status-out"):
        read_judging(bad, "x")


def test_an_incomplete_row_says_which_judge_how_many_and_why(
    cfg: GamutConfig, tmp_path: Path
) -> None:
    ledger = Ledger.open(tmp_path / "ledger", KeyScheme.keyed("s" * 32), held=True)

    def failure(i: int, kind: str, sid: str = "half-done", who: str = "j1-id") -> FailureRecord:
        return FailureRecord(bytes([i]) * 32, who, "j1", sid, "multimodal", f"q{i}", "I1", kind,
                             message="secret message", raw="raw reply")  # fmt: skip

    ledger.append_failures(
        [failure(i, k) for i, k in enumerate(["api_error"] * 4 + ["rejected"])]
        + [failure(9, "deadline", who="j1-old-id"), failure(10, "deadline", sid="new-model")]
    )
    causes = failure_causes(ledger.failures(["j1-id"]), "half-done")
    assert causes == {("j1", "multimodal"): {"api_error": 4, "rejected": 1}}
    md = render_comment(Project(cfg), "half-done", causes=causes)
    line = next(ln for ln in md.splitlines() if ln.startswith("- judge `j1`, multimodal"))
    assert "7 check(s) without a verdict" in line
    assert "4 provider errors after retries" in line and "1 requests the provider refused" in line
    assert "2 not judged yet" in line
    assert "secret message" not in md and "raw reply" not in md
    assert "### Why incomplete" not in render_comment(Project(cfg), "new-model")


def test_the_comment_links_the_submissions_page_on_the_site(tmp_path: Path) -> None:
    assert submission_url("https://x.example/gamut/", "new-model") == (
        "https://x.example/gamut/submissions/new-model.html"
    )
    assert submission_url(None, "new-model") is None
    assert submission_url("https://x.example/", "Bad Id") is None


#: Every autolink form GitHub makes in a comment (GFM's autolink extension, then GitHub's own
#: references), as user-supplied text would carry it.
AUTOLINKS = [
    ("www", "Alpha VL see www.evil-example.com"),
    ("www, upper case", "Alpha (WWW.Evil-Example.com/path?x=1)"),
    ("www after a delimiter", "*www.evil-example.com*"),
    ("http", "Alpha http://evil.example/x"),
    ("https", "Alpha https://evil.example"),
    ("scheme, upper case", "HTTPS://evil.example"),
    ("ftp", "ftp://evil.example/file"),
    ("e-mail", "mail me: someone.else+tag@evil-example.com"),
    ("mailto", "mailto:someone@evil-example.com"),
    ("xmpp", "xmpp:someone@evil-example.com/res"),
    ("mention", "thanks @maintainer"),
    ("team mention", "cc @some-org/some-team"),
    ("everyone", "@everyone"),
    ("issue", "fixes #123"),
    ("issue, parenthesised", "(#7)"),
    ("GH- reference", "see GH-42 and gh-43"),
    ("repository issue", "owner/repo#1"),
    ("commit", "built at 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"),
    ("short commit", "built at deadbee"),
    ("user commit", "octocat@1a2b3c4"),
    ("repository commit", "owner/repo@1a2b3c4d"),
]

#: What GitHub turns into a link or a reference, by the rules of GFM's autolink extension and
#: GitHub's references; in escaped text, none may match.
_LINKABLE = [
    re.compile(r"(?i)(?:^|[\s*_~(\[\]])www\.[\w-]+(?:\.[\w-]+)+"),
    re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s<]"),
    re.compile(r"(?i)\b(?:mailto|xmpp):[\w.+-]+@"),
    re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    re.compile(r"(?:^|[^\w`])@[A-Za-z0-9]"),
    re.compile(r"#\d"),
    re.compile(r"(?i)\bgh-\d"),
    re.compile(r"(?i)(?<![\w\u200b])[0-9a-f]{7,40}(?![\w\u200b])"),
]


def _visible(md: str) -> str:
    """The text a reader sees: backslash escapes and entities resolved, zero-width spaces gone."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", md)).replace("\u200b", "")


@pytest.mark.parametrize(("form", "text"), AUTOLINKS, ids=[f for f, _ in AUTOLINKS])
def test_no_autolink_survives_the_escape_and_the_text_reads_the_same(form: str, text: str) -> None:
    out = escape(text)
    hits = [p.pattern for p in _LINKABLE if p.search(out)]
    assert not hits, (form, out, hits)
    assert _visible(out) == text
    # the same through a real Markdown parser with GitHub-style autolinks (pymdownx.magiclink:
    # URLs, www., e-mail, mentions, issues and commits of a GitHub repository)
    import markdown

    magic = {"repo_url_shorthand": True, "social_url_shorthand": True, "provider": "github",
             "user": "owner", "repo": "repo"}  # fmt: skip
    html_out = markdown.markdown(
        f"x {out} x",
        extensions=["pymdownx.magiclink"],
        extension_configs={"pymdownx.magiclink": magic},
    )
    assert "<a " not in html_out, (form, html_out)


def test_the_autolink_check_catches_each_form_unescaped() -> None:
    for form, text in AUTOLINKS:
        assert any(p.search(text) for p in _LINKABLE), form


def test_a_model_name_with_a_www_link_renders_as_text(tmp_path: Path) -> None:
    res = tmp_path / "results"
    res.mkdir()
    row = _row("new-model", "multimodal", "j1", 41.0, 1)
    row["model_name"] = "Alpha VL see www.evil-example.com"
    row["organisation"] = "Lab (@lab-admin, #12)"
    pd.DataFrame([row]).to_parquet(res / "leaderboard.parquet")
    (res / "provenance.json").write_text(json.dumps({"primary_judge": "j1"}))
    md = render_comment(Project(load_config(write_config(tmp_path, "rubrics"))), "new-model")
    assert "www.evil" not in md and "@lab" not in md and "#12" not in md
    assert "Alpha VL see www\u200b.evil-example.com" in md


def test_without_a_report_the_comment_never_says_there_are_no_warnings(
    cfg: GamutConfig, tmp_path: Path
) -> None:
    report = tmp_path / "validation.json"
    report.write_text(json.dumps({"problems": []}))
    out = tmp_path / "c.md"
    base = ["comment", "--config", str(cfg.file), "--submission", "new-model", "--out", str(out)]
    assert CliRunner().invoke(main, base).exit_code == 0
    text = out.read_text()
    assert "no warnings" not in text and "warnings are not listed here" in text
    assert CliRunner().invoke(main, [*base, "--warnings", str(report)]).exit_code == 0
    assert "The validator raised no warnings." in out.read_text()
