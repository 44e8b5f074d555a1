"""The sticky pull-request comment: one submission's scores, read from the score tables.

Built from ``results/`` (ids, numbers, metadata) and the validator's report only, never a rubric,
so it cannot leak check text. Text from the pull request is escaped so it cannot ping people,
close the HTML comment marker or inject markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from scoring import numbers
from scoring.errors import GamutError
from scoring.layout import ResultsLayout
from scoring.questions import Setting
from scoring.rubric import Tier
from scoring.tables.tables import TIER_COLUMNS

if TYPE_CHECKING:
    from gamut.project import Project
    from scoring.ledger import FailureRecord

#: The hidden marker the workflow searches for to update one comment instead of adding another.
MARKER = "<!-- gamut-score -->"
MAX_WARNINGS = 30
MAX_TEXT = 300
#: The tier score columns (``ac``, ``v``, ``c``) with each tier's name.
TIERS = tuple(zip(TIER_COLUMNS, (t.value.replace("_", "-") for t in Tier), strict=True))


#: Why a check has no verdict, by the judge's failure kind (the ledger records it).
CAUSES = {
    "api_error": "provider errors after retries (rate limits, server errors, timeouts)",
    "rejected": "requests the provider refused (or, for a replay judge, no stored verdict)",
    "bad_body": "replies that were not a valid verdict",
    "bad_output": "replies that were not a valid verdict",
    "deadline": "not attempted before the run's deadline",
}
NOT_JUDGED = "not judged yet"

#: (judge, setting) -> failure kind -> number of checks.
Causes = dict[tuple[str, str], dict[str, int]]


def failure_causes(failures: Iterable[FailureRecord], submission_id: str) -> Causes:
    """One submission's recorded failures (ids and kinds only, never a message), counted by
    judge, setting and kind."""
    out: Causes = {}
    for f in failures:
        if f.submission_id != submission_id:
            continue
        by_kind = out.setdefault((f.judge, f.setting), {})
        by_kind[f.kind] = by_kind.get(f.kind, 0) + 1
    return out


def submission_url(site_url: str | None, submission_id: str) -> str | None:
    """The submission's page on the deployed site (``submissions/<id>.html``), if it has one."""
    if not site_url or not re.fullmatch(r"[a-z0-9][a-z0-9._-]{2,63}", submission_id):
        return None
    return f"{site_url.rstrip('/')}/submissions/{submission_id}.html"


#: A zero-width space: invisible, not part of any URL, domain, name or number, so GitHub's
#: autolinks do not form across it.
ZWSP = "\u200b"


def _split_hex(match: re.Match[str]) -> str:
    run = match[0]
    return ZWSP.join(run[i : i + 4] for i in range(0, len(run), 4))


#: Every autolink GitHub makes in a comment, and what breaks it. GFM's autolink extension (at
#: parse time): ``www.`` + a domain; ``http://`` / ``https://`` (any ``scheme://`` here);
#: ``mailto:`` and ``xmpp:``; e-mail addresses ``local@domain.tld``. GitHub's own references
#: (after rendering, so a backslash escape may not stop them): ``@user`` and ``@org/team``,
#: ``#123``, ``GH-123``, ``owner/repo#123``, ``user@sha``, ``owner/repo@sha`` and bare commit
#: shas (7 to 40 hex digits). The breaks leave the text as it reads.
_AUTOLINKS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"(?i)(www)(?=\.)"), rf"\1{ZWSP}"),
    (re.compile(r":(?=//)"), f":{ZWSP}"),
    (re.compile(r"(?i)(mailto|xmpp)(?=:)"), rf"\1{ZWSP}"),
    (re.compile(r"@"), f"@{ZWSP}"),
    (re.compile(r"#"), f"#{ZWSP}"),
    (re.compile(r"(?i)\b(gh-)(?=\d)"), rf"\1{ZWSP}"),
    (re.compile(r"\b[0-9a-fA-F]{7,}\b"), _split_hex),
)


def escape(text: object, limit: int = MAX_TEXT) -> str:
    """Make untrusted text inert in GitHub markdown: syntax escaped, and each autolink form
    (:data:`_AUTOLINKS`) broken by a zero-width space, so it reads the same but links nowhere."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"([\\`*_\[\]|#!~])", r"\\\1", s)
    for pattern, repl in _AUTOLINKS:
        s = pattern.sub(repl, s)
    return s


def code(text: object, limit: int = 80) -> str:
    """Text shown as inline code: backticks and line breaks removed, length capped."""
    s = " ".join(str(text).replace("`", "'").split())[:limit]
    return f"`{s}`"


def _ci(row: pd.Series, col: str, signed: bool = False) -> str:
    return numbers.with_ci(row.get(col), row.get(f"{col}_lo"), row.get(f"{col}_hi"), sign=signed)


def _read(
    results: Path, name: str, required: bool = True, config_flag: str = ""
) -> pd.DataFrame | None:
    path = ResultsLayout(results).table(name)
    if not path.is_file():
        if required:
            raise GamutError(f"{path} does not exist; run `gamut score{config_flag}` first")
        return None
    df = pd.read_parquet(path)
    for col in df.columns:
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            df[col] = df[col].astype(object)
    return df


def read_warnings(path: Path) -> list[dict[str, Any]]:
    """The warnings of a validator JSON report (the object, or a plain list of problems)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GamutError(f"cannot read warnings file {path}: {exc}") from None
    problems = data.get("problems") if isinstance(data, dict) else data
    if not isinstance(problems, list) or not all(isinstance(p, dict) for p in problems):
        raise GamutError(
            f"{path} is not a validator report; write it with "
            "`gamut submission validate --format json`"
        )
    return [p for p in problems if p.get("severity", "warning") != "error"]


def _scores_section(rows: pd.DataFrame, board: pd.DataFrame) -> list[str]:
    out = [
        "| setting | Gamut score [95% CI] | rank among current entries | "
        "answer-critical | valuable | context | status |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for _, r in rows.iterrows():
        peers = board[(board["setting"] == r["setting"]) & (board["judge"] == r["judge"])
                      & (board["status"] == "complete")]  # fmt: skip
        if r["status"] == "complete" and not pd.isna(r.get("rank")):
            rank = f"{int(r['rank'])} of {len(peers)}"
            if not pd.isna(r.get("rank_lo")) and not pd.isna(r.get("rank_hi")):
                rank += f" (CI {int(r['rank_lo'])}–{int(r['rank_hi'])})"
        else:
            rank = "–"
        status = r["status"]
        if status != "complete":
            status = f"incomplete ({int(r.get('n_checks_missing', 0))} checks without verdict)"
        tiers = " | ".join(_ci(r, t) for t, _ in TIERS)
        out.append(f"| {r['setting']} | **{_ci(r, 'gamut')}** | {rank} | {tiers} | {status} |")
    return out


def _mix_section(rows: pd.DataFrame) -> list[str]:
    out = ["", "Verdict mix (share of checks):", ""]
    for _, r in rows.iterrows():
        parts = [f"{name} {100 * float(r[col]):.0f}%" for col, name in (
            ("share_meets", "meets"), ("share_partial", "partially meets"),
            ("share_missing", "missing"), ("share_contradicts", "contradicts"))
            if col in r and not pd.isna(r[col])]  # fmt: skip
        if parts:
            out.append(f"- {r['setting']}: " + ", ".join(parts))
    return out if len(out) > 3 else []


def _domain_section(dom: pd.DataFrame | None, sid: str, judge: str) -> list[str]:
    if dom is None or dom.empty:
        return []
    mine = dom[(dom["submission_id"] == sid) & (dom["judge"] == judge)]
    if mine.empty:
        return []
    settings = [s.value for s in Setting if s.value in set(mine["setting"])]
    out = [
        "",
        "### Per domain",
        "",
        "| domain | questions | " + " | ".join(settings) + " |",
        "| --- | --- | " + " | ".join("---" for _ in settings) + " |",
    ]
    for domain in sorted(set(mine["domain"])):
        cells, n = [], 0
        for s in settings:
            hit = mine[(mine["domain"] == domain) & (mine["setting"] == s)]
            cells.append(_ci(hit.iloc[0], "gamut") if len(hit) else "–")
            n = int(hit.iloc[0]["n_questions"]) if len(hit) else n
        out.append(f"| {escape(domain, 60)} | {n} | " + " | ".join(cells) + " |")
    return out


def _judges_section(board: pd.DataFrame, sid: str, primary: str) -> list[str]:
    others = board[(board["submission_id"] == sid) & (board["judge"] != primary)]
    if others.empty:
        return []
    out = [
        "",
        "### Other judges",
        "",
        "| judge | setting | Gamut score [95% CI] | status |",
        "| --- | --- | --- | --- |",
    ]
    for _, r in others.iterrows():
        out.append(
            f"| {code(r['judge'], 60)} | {r['setting']} | {_ci(r, 'gamut')} | {r['status']} |"
        )
    return out


def _cost_section(board: pd.DataFrame, sid: str) -> list[str]:
    """What judging the submission cost: the leaderboard's cost columns summed over its rows
    that recorded tokens (replayed or offline verdicts record none, and are said to)."""
    mine = board[board["submission_id"] == sid]
    if mine.empty or "judge_calls" not in mine.columns:
        return []
    recorded = mine[mine["judge_calls"].notna()]
    if recorded.empty:
        return ["", "Judging cost: not recorded (replayed or offline verdicts)."]
    calls, t_in, t_cached, t_out = (
        int(recorded[c].sum())
        for c in ("judge_calls", "judge_tokens_in", "judge_tokens_cached", "judge_tokens_out")
    )
    usd = recorded["judge_cost_usd"]
    money = f", ${usd.sum():,.2f} at the configured prices" if usd.notna().all() else ""
    part = "" if len(recorded) == len(mine) else f" ({len(recorded)} of {len(mine)} rows recorded)"
    return [
        "",
        f"Judging cost, every judge and setting{part}: {calls:,} calls, {t_in:,} tokens in "
        f"({t_cached:,} cached), {t_out:,} out{money}.",
    ]


def _incomplete_section(board: pd.DataFrame, sid: str, causes: Causes) -> list[str]:
    rows = board[(board["submission_id"] == sid) & (board["status"] != "complete")]
    if rows.empty:
        return []
    out = [
        "",
        "### Why incomplete",
        "",
        "An incomplete row has checks without a verdict; it is shown but not ranked. The next "
        "scoring run retries them.",
        "",
    ]
    for _, r in rows.sort_values(["judge", "setting"]).iterrows():
        n = int(r.get("n_checks_missing", 0) or 0)
        found = causes.get((str(r["judge"]), str(r["setting"])), {})
        parts = [f"{k} {CAUSES.get(kind, kind)}" for kind, k in sorted(found.items())]
        rest = n - sum(found.values())
        if rest > 0:
            parts.append(f"{rest} {NOT_JUDGED}")
        out.append(
            f"- judge {code(r['judge'], 60)}, {r['setting']}: {n} check(s) without a verdict"
            + (f": {'; '.join(parts)}" if parts else "")
        )
    return out


def _warnings_section(warnings: list[dict[str, Any]] | None) -> list[str]:
    if warnings is None:  # no report was read: say so, never "no warnings"
        return [
            "",
            "The validator's warnings are not listed here: `gamut submission validate` prints "
            "them, and `gamut comment --warnings REPORT` lists them.",
        ]
    if not warnings:
        return ["", "The validator raised no warnings."]
    out = [
        "",
        f"### Validator warnings ({len(warnings)})",
        "",
        "Warnings do not block a submission; a maintainer reviews them before merging.",
        "",
    ]
    for w in warnings[:MAX_WARNINGS]:
        where = escape(w.get("file", "?"), 120)
        if w.get("line"):
            where += f":{int(w['line'])}"
        fix = f" ({escape(w['fix'])})" if w.get("fix") else ""
        out.append(f"- {where}: {escape(w.get('message', ''))}{fix}")
    if len(warnings) > MAX_WARNINGS:
        out.append(
            f"- … and {len(warnings) - MAX_WARNINGS} more (see the validation run's summary)"
        )
    return out


def read_judging(path: Path, submission_id: str) -> dict[str, int] | None:
    """One submission's judging progress from a ``gamut judge --status-out`` file, or None
    when the file does not name it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8")[:5_000_000])
        subs = data["submissions"]
        row = subs.get(submission_id)
        if row is None:
            return None
        out = {k: int(row[k]) for k in ("checks", "done", "in_flight", "failed")}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GamutError(
            f"cannot read judging status {path}: {exc!r}; write it with "
            "`gamut judge --status-out FILE`"
        ) from None
    return out


def judging_line(judging: dict[str, int]) -> str:
    """``judging: N of M checks done`` while batches are in flight (counts over every judge)."""
    line = f"**judging: {judging['done']:,} of {judging['checks']:,} checks done**"
    if judging["in_flight"]:
        line += (
            f" ({judging['in_flight']:,} in provider batches; this comment is updated when "
            "they are collected)"
        )
    if judging["failed"]:
        line += f"; {judging['failed']:,} failed and will be retried"
    return line


def _model_line(first: pd.Series, sid: str, primary: str, prov: dict[str, Any]) -> str:
    """Who the model is, which judge judged it, and the rubric version."""
    model = escape(first.get("model_name", sid), 120)
    org = first.get("organisation")
    judge = prov.get("judges", {}).get(primary, {})
    version = prov.get("rubric_version")
    return (
        f"Model **{model}**"
        + (f" ({escape(org, 120)})" if org and not pd.isna(org) else "")
        + f", judged by the primary judge {code(primary, 60)}"
        + (f" ({code(judge['model'])})" if judge.get("model") else "")
        + (f", rubric version {code(version, 40)}" if version else "")
        + "."
    )


def _gap_section(rows: pd.DataFrame) -> list[str]:
    gap = rows[rows["setting"] == "multimodal"]
    if not len(gap) or "gap" not in gap.columns or pd.isna(gap.iloc[0]["gap"]):
        return []
    return [
        "",
        "Visual-identification gap (text-only minus multimodal): "
        f"**{_ci(gap.iloc[0], 'gap', signed=True)}**",
    ]


def _footer(site_url: str | None, sid: str) -> list[str]:
    page = submission_url(site_url, sid)
    published = "The submission's page on the leaderboard, once merged and published"
    return [
        *(["", f"{published}: <{page}>"] if page else []),
        "",
        "<sub>Scores are 100 × the mean question score (range −100 to 100) with 95% "
        "bootstrap intervals over questions. Ranks are among the entries currently on the "
        "leaderboard. This comment is updated on every push to the pull request.</sub>",
    ]


def render_comment(
    project: Project,
    submission_id: str,
    warnings: list[dict[str, Any]] | None = None,
    causes: Causes | None = None,
    judging: dict[str, int] | None = None,
    config_flag: str = "",
) -> str:
    """The markdown of the sticky comment for ``submission_id``, starting with :data:`MARKER`.

    ``warnings`` None: no report was read (the comment never says there are none). ``causes``
    explain incomplete rows; ``judging`` (in flight) makes scores provisional or absent.
    """
    board = _read(project.results, "leaderboard", config_flag=config_flag)
    assert board is not None
    prov_file = project.results_layout.provenance
    prov: dict[str, Any] = (
        json.loads(prov_file.read_text(encoding="utf-8")) if prov_file.is_file() else {}
    )
    primary = str(prov.get("primary_judge") or project.cfg.primary_judge)
    mine = board[(board["submission_id"] == submission_id) & (board["judge"] == primary)]
    rows = mine.sort_values("setting")
    pending = judging is not None and judging["done"] < judging["checks"]
    progress = [judging_line(judging), ""] if pending and judging is not None else []
    lines = [MARKER, f"## GAMUT score: {code(submission_id, 64)}", ""]
    if rows.empty and progress:
        lines += [*progress, "Scores appear here once the primary judge's verdicts are in."]
        return "\n".join(lines + _warnings_section(warnings)) + "\n"
    if rows.empty:
        raise GamutError(
            f"submission {submission_id!r} has no row for judge {primary!r} in "
            f"{project.results_layout.table('leaderboard')}; run `gamut judge{config_flag}` and "
            f"`gamut score{config_flag}`"
        )
    lines += [_model_line(rows.iloc[0], submission_id, primary, prov), "", *progress]
    lines += _scores_section(rows, board) + _gap_section(rows) + _mix_section(rows)
    by_domain = _read(project.results, "by_domain", required=False)
    lines += _domain_section(by_domain, submission_id, primary)
    lines += _judges_section(board, submission_id, primary)
    lines += _cost_section(board, submission_id)
    lines += _incomplete_section(board, submission_id, causes or {})
    lines += _warnings_section(warnings)
    lines += _footer(project.cfg.site.url, submission_id)
    return "\n".join(lines) + "\n"


def render_refusal(submission_id: str, holder: int | str, submissions: str = "submissions") -> str:
    """The sticky comment of a pull request refused because ``holder`` (``"main"``, or the
    number of an earlier open pull request) already holds ``submission_id``."""
    folder = f"{submissions.rstrip('/')}/{submission_id}/" if submissions != "." else submission_id
    if holder == "main":
        why = (
            f"**Not scored**: the submission {code(submission_id, 64)} is already on `main`, "
            "and a merged submission is never replaced by a pull request (its scores and paid "
            "verdicts stay what was published), so nothing was judged."
        )
        fix = (
            f"Submit the new responses under a new id: rename the folder {code(folder, 120)} "
            "(for example with a `-v2` suffix; lowercase letters, digits, `.`, `_`, `-`) and "
            "push again. To withdraw or correct the merged one, ask the maintainers."
        )
    else:
        why = (
            f"**Not scored**: the submission id {code(submission_id, 64)} is already used by "
            f"pull request #{int(holder)}, which was opened first; two pull requests cannot "
            "share a submission folder, so nothing was judged."
        )
        fix = (
            f"Rename the folder {code(folder, 120)} to an id of your own (lowercase letters, "
            "digits, `.`, `_`, `-`) and push again. If both pull requests are yours, close "
            "one of them."
        )
    return (
        "\n".join([MARKER, f"## GAMUT score: {code(submission_id, 64)}", "", why, "", fix]) + "\n"
    )
