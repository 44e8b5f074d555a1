"""Batch files for self-hosted judges: requests out in the OpenAI batch format (what ``vllm
run-batch`` reads as they are), its output files back in."""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from scoring.errors import BadReply, GamutError, Problem, ProblemsError
from scoring.fastjson import dumps_line
from scoring.jsonl import JsonlLimits, read_jsonl
from scoring.judge import providers
from scoring.judge.backends import JudgeRequest, Turn
from scoring.judge.batch.api import BatchResult, batch_backend
from scoring.judge.batch.openai_lines import OPENAI_LIMITS, parse_result_line, request_line
from scoring.judge.batch.runner import MAX_ATTEMPTS, Ingest
from scoring.judge.batch.shard import (
    ImportIngest,
    ShardSink,
    imported_lines,
    journal_lines,
    line_digest,
)
from scoring.judge.cache import VerdictCache
from scoring.judge.items import PairItem, pair_items
from scoring.judge.judges import BuiltJudge
from scoring.judge.outcome import JudgeStats
from scoring.judge.pairs import IntArray, PairPlan
from scoring.judge.progress import NullProgress
from scoring.judge.prompt import parse_reply
from scoring.ledger import FailureRecord, KeyIndex, Ledger, key_bytes, keys_array
from scoring.storage import atomic_write

#: Longest result line read, in bytes (a reply is a few hundred; a longer line is refused).
MAX_LINE_BYTES = 1 << 20
#: Largest result file read, in bytes.
MAX_FILE_BYTES = 2 << 30


def _check_format(j: BuiltJudge) -> None:
    if not providers.entry(j.config.provider).chat_completions:
        raise GamutError(
            f"judge {j.name!r} uses provider {j.config.provider!r}; batch files are in the "
            "OpenAI batch format, for judges with provider 'openai' (an OpenAI-compatible "
            "server such as vLLM)"
        )


def _reasks(j: BuiltJudge, ledger: Ledger) -> dict[bytes, tuple[int, tuple[Turn, ...]]]:
    """Requests whose last reply was unusable and that have re-asks left: their next attempt and
    turn (none when the ledger is held and keeps no reply text)."""
    out: dict[bytes, tuple[int, tuple[Turn, ...]]] = {}
    for f in ledger.failures([j.identity]):
        if f.kind != "bad_output" or f.calls >= MAX_ATTEMPTS:
            continue
        turns: tuple[Turn, ...] = ()
        if f.raw:
            try:
                parse_reply(f.raw)
            except BadReply as exc:
                turns = (Turn(f.raw, j.template.render_reask(str(exc))),)
        out[f.key] = (f.calls + 1, turns)
    return out


def _open_pairs(p: PairPlan, known: KeyIndex, pending: KeyIndex) -> tuple[IntArray, IntArray]:
    """The pairs of a plan with a response and without a verdict, and those with one."""
    done = known.contains(p) | pending.contains(p)
    return np.flatnonzero(~done & ~p.empty), np.flatnonzero(done & ~p.empty)


def _private_dir(out_dir: Path) -> None:
    """Make ``out_dir`` a folder only its owner can enter (0700); an existing one must be so."""
    try:
        out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = out_dir.stat()
    except OSError as exc:
        raise GamutError(f"--export-batch {out_dir}: cannot make the folder: {exc}") from None
    if stat.S_IMODE(st.st_mode) & 0o077 or st.st_uid != os.getuid():
        raise GamutError(
            f"--export-batch {out_dir}: the request files hold the check text of held rubrics, "
            f"and this folder is open to others (mode {stat.S_IMODE(st.st_mode):o}, or not "
            "yours); give a new folder (it is made 0700), or `chmod 700` this one"
        )


def export_batch(
    plans: Sequence[PairPlan],
    ledger: Ledger,
    cache_path: Path,
    out_dir: Path,
    *,
    private: bool = False,
) -> dict[str, dict[Path, int]]:
    """Write the requests of every (response, check) without a verdict as OpenAI batch files,
    ``<out_dir>/<judge>-<attempt>-<n>.jsonl``, each within OpenAI's per-file limits."""
    out: dict[str, dict[Path, int]] = {}
    for p in plans:
        _check_format(p.judge)
    if private:
        _private_dir(out_dir)
    known, _ = ledger.key_index()
    with VerdictCache(cache_path, ledger) as cache:
        pending = cache.pending_index()
    mode = 0o600 if private else None
    for p in plans:
        j = p.judge
        todo, _ = _open_pairs(p, known, pending)
        again = _reasks(j, ledger)
        pairs = [
            (again[k][0] if k in again else 1, i, k)
            for i, k in zip(todo.tolist(), key_bytes(p.keys_of(todo)), strict=True)
        ]
        out[j.name] = {}
        for attempt in sorted({a for a, _, _ in pairs}):
            mine = [(i, k) for a, i, k in pairs if a == attempt]
            name = f"{j.name}-{attempt}-{{:04d}}.jsonl"
            out[j.name] |= _write_files(_request_lines(p, mine, again), out_dir / name, mode)
    return out


def _request_lines(
    p: PairPlan,
    pairs: list[tuple[int, bytes]],
    again: dict[bytes, tuple[int, tuple[Turn, ...]]],
) -> Iterator[bytes]:
    """The request line of each (pair, key), as :func:`request_line` writes the body of the judge
    backend's one body builder, with each response's part rendered and encoded once."""
    body = batch_backend(p.judge.backend).batch_body
    mark = secrets.token_hex(16)
    marks = ("I" + mark, "P" + mark)
    shape: tuple[int, list[bytes] | None] = (-1, None)
    prompts: dict[int, bytes] = {}  # each check's prompt as a JSON string without its quotes
    for i, key in pairs:
        unit, check = int(p.unit[i]), int(p.check[i])
        if shape[0] != unit:
            shape = (unit, _line_shape(body, p.request(i), marks))
        parts = shape[1]
        if parts is None or key in again:
            yield request_line(key.hex(), body(p.request(i), again[key][1] if key in again else ()))
            continue
        text = prompts.get(check)
        if text is None:
            text = prompts[check] = dumps_line(p.check_prompt(check))[1:-1]
        yield b"".join((parts[0], key.hex().encode(), parts[1], text, parts[2]))


def _line_shape(
    body: Callable[[JudgeRequest, tuple[Turn, ...]], dict[str, Any]],
    req: JudgeRequest,
    marks: tuple[str, str],
) -> list[bytes] | None:
    """The request line of ``req`` cut where its custom id and its check's prompt go (the check's
    own fields replaced by the mark too, so that a body that used them is written whole)."""
    cid, prompt = (m.encode() for m in marks)
    marked = replace(req, check_id=marks[1], check=marks[1], check_prompt=marks[1])
    line = request_line(marks[0], body(marked, ()))
    if line.count(cid) != 1 or line.count(prompt) != 1:
        return None
    head, rest = line.split(cid)
    if prompt not in rest:
        return None
    return [head, *rest.split(prompt)]


def _write_files(lines: Iterator[bytes], pattern: Path, mode: int | None) -> dict[Path, int]:
    """Write ``lines`` to the files ``pattern`` names, each within :data:`OPENAI_LIMITS`, each
    written beside and renamed when whole; returns each file and its lines."""
    written: dict[Path, int] = {}
    nxt = next(lines, None)
    count = 0

    def write(tmp: Path) -> None:
        nonlocal nxt, count
        count = size = 0
        with tmp.open("wb", buffering=1 << 20) as f:
            while nxt is not None and (
                not count
                or (count < OPENAI_LIMITS.max_requests
                    and size + len(nxt) + 1 <= OPENAI_LIMITS.max_bytes)
            ):  # fmt: skip
                f.write(nxt + b"\n")
                count, size = count + 1, size + len(nxt) + 1
                nxt = next(lines, None)

    while nxt is not None:
        path = pattern.with_name(pattern.name.format(len(written) + 1))
        atomic_write(path, write, mode)
        written[path] = count
    return written


@dataclass
class ImportReport:
    """What :func:`import_batch` did."""

    files: int = 0
    refused: int = 0
    skipped: int = 0
    stats: dict[str, JudgeStats] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    fruitless: list[Problem] = field(default_factory=list)


#: Problems listed per result file; the reading of a file stops there.
MAX_PROBLEMS = 200
_LIMITS = JsonlLimits(
    max_file_bytes=MAX_FILE_BYTES, max_line_bytes=MAX_LINE_BYTES, max_problems=MAX_PROBLEMS
)
_FIX_LINE = "give the run's output file (one result object per line)"
_FIX_TRUNC = "the file was cut short: take the whole output file of the run again"


#: One result of a file, the judge it is for, and the line's own ``id`` (names the line).
_Result = tuple[BatchResult, BuiltJudge, object]


def _refusal(
    cid: str, again: int | None, res: BatchResult, owner: tuple[BuiltJudge, PairItem] | None
) -> tuple[str, str] | None:
    """Why a result line is refused (message, fix): an id given before, one no pair waits for, or a
    reply from another model than its judge's; None when it is not."""
    if again is not None:
        return (
            f"custom_id {cid[:16]}... appears twice (first at line {again})",
            "give each result once; the file is not ingested",
        )
    if owner is None:
        return (
            f"unknown custom_id {cid[:16]}...: no (response, check) of these judges "
            "without a verdict has it",
            "import output files of requests exported by `gamut judge --export-batch` "
            "for the current submissions and rubrics",
        )
    j, comp = owner[0], res.completion
    if comp is not None and comp.model != j.config.model:
        return (
            f"reply from model {comp.model[:80]!r}, but judge {j.name!r} is model "
            f"{j.config.model!r}",
            "import each judge's own output (or fix the judge's model in the config)",
        )
    return None


def _check_file(
    path: Path,
    owners: dict[str, tuple[BuiltJudge, PairItem]],
    known: set[str],
    held: bool,
) -> tuple[list[_Result], int, list[Problem]]:
    """Every result of one file and its problems (the file is refused when there are any)."""
    f = str(path)
    problems: list[Problem] = []
    results: list[_Result] = []
    first: dict[str, int] = {}
    skipped = 0
    size_fix = f"split the run's input into files under {MAX_FILE_BYTES >> 30} GB of results"
    read = read_jsonl(path, f, _FIX_LINE, _LIMITS, blank_lines=False, what="a result file",
                      size_fix=size_fix, report=problems.append, stream=True)  # fmt: skip
    stopped = None
    for n, obj in read.lines:
        if len(problems) >= MAX_PROBLEMS:  # the reader's and these together
            stopped = problems[-1].line
            break
        try:
            res = parse_result_line(obj, "", str, held=held)
        except ValueError as exc:
            problems.append(Problem(f, n, str(exc), _FIX_LINE))
            continue
        if res.error_kind == "bad_body" and not held:  # keep the raw reply (capped when stored)
            res = res._replace(raw=json.dumps(obj)[: 64 * 1024])
        cid = res.custom_id
        again = first.setdefault(cid, n)
        if again == n and cid in known:
            skipped += 1
            continue
        wrong = _refusal(cid, None if again == n else again, res, owners.get(cid))
        if wrong is not None:
            problems.append(Problem(f, n, *wrong))
            continue
        results.append((res, owners[cid][0], obj.get("id") or json.dumps(obj, sort_keys=True)))
    stopped = read.stopped_at or stopped
    if stopped is not None:
        problems.append(
            Problem(
                f,
                stopped,
                f"{len(problems)} problems: the rest of the file was not read",
                "fix these (is it the run's output file?) and import the file again",
            )
        )
    cut = read.unterminated
    if cut is not None and stopped is None:
        at = [i for i, p in enumerate(problems) if p.line == cut]
        if at:
            message = "truncated last line (no newline, not JSON)"
            problems[at[0]] = Problem(f, cut, message, _FIX_TRUNC)
        else:
            problems.append(Problem(f, cut, "truncated last line (no newline)", _FIX_TRUNC))
    return results, skipped, problems


_KIND_WORDS = {
    "rejected": "refused (HTTP 4xx: final)",
    "api_error": "server error (asked again by the next export)",
    "expired": "expired",
    "canceled": "cancelled",
}


def _fruitless(path: Path, results: list[_Result]) -> Problem:
    """The problem of a file that gave nothing: what its lines were."""
    if not results:
        return Problem(
            str(path),
            None,
            "holds no result lines: nothing was ingested",
            "give the output file of a `vllm run-batch` run of the exported requests",
        )
    kinds = Counter(res.error_kind for res, *_ in results)
    said = ", ".join(f"{n} {_KIND_WORDS.get(k, k)}" for k, n in sorted(kinds.items()))
    return Problem(
        str(path),
        None,
        f"nothing ingested: each of its {len(results)} result(s) is an error ({said})",
        "see the failed checks listed and the run's log (a 404 names a model the server does "
        "not serve: serve the judge's `model`; a 400 may be a prompt over the context length); "
        "fix the run and import its new output",
    )


def import_batch(
    files: Iterable[Path], plans: Sequence[PairPlan], ledger: Ledger, cache_path: Path
) -> ImportReport:
    """Ingest ``vllm run-batch`` (OpenAI batch format) output files for the planned judges."""
    report = ImportReport()
    for p in plans:
        _check_format(p.judge)
    with ledger.lock("gamut judge --import-batch"):
        with VerdictCache(cache_path, ledger) as cache:
            cache.flush()  # what an interrupted run left: the ledger then knows every verdict
        known_index, _ = ledger.key_index()
        empty = KeyIndex(keys_array([]))
        sink = ShardSink(ledger.held)
        owners: dict[str, tuple[BuiltJudge, PairItem]] = {}
        known: set[str] = set()
        ingests: dict[str, ImportIngest] = {}
        attempts: dict[str, dict[bytes, int]] = {}
        done = imported_lines(ledger, [p.judge.identity for p in plans])
        for p in plans:
            j = p.judge
            open_pairs, have = _open_pairs(p, known_index, empty)
            todo = {it.key.hex(): it for it in pair_items(p, open_pairs)}  # custom id, no check
            known |= {k.hex() for k in key_bytes(p.keys_of(have))}
            for cid, it in todo.items():
                owners[cid] = (j, it)
            stats = JudgeStats(j.name, j.label, j.identity)
            report.stats[j.name] = stats
            ingests[j.name] = ImportIngest(j, todo, sink, stats, NullProgress())
            attempts[j.name] = {k: a for k, (a, _) in _reasks(j, ledger).items()}
        for path in files:
            report.files += 1
            results, skipped, problems = _check_file(path, owners, known, ledger.held)
            if problems:
                report.refused += 1
                report.problems.extend(problems)
                continue
            gave = sum(s.judged + s.reasks for s in report.stats.values())
            journal: dict[str, dict[bytes, str]] = {}
            for res, j, line_id in results:
                ing, cid = ingests[j.name], res.custom_id
                item = ing.todo.get(cid)
                if item is None:
                    continue
                digest = line_digest(line_id, cid)
                if digest in done.get(cid, ()):
                    skipped += 1
                    continue
                if ing.one(res, attempts[j.name].get(item.key, 1)) and cid not in ing.todo:
                    known.add(cid)
                else:
                    journal.setdefault(j.name, {})[item.key] = digest
                    done.setdefault(cid, set()).add(digest)
            report.skipped += skipped
            for j_name, lines in journal.items():
                journal_lines(ledger, ingests[j_name].j, lines)
            _record_reasks(ingests.values())
            sink.write(ledger, known_index)  # the file's journal: a verdict shard, a failure shard
            if not skipped and sum(s.judged + s.reasks for s in report.stats.values()) == gave:
                report.fruitless.append(_fruitless(path, results))
    if report.problems:
        raise ProblemsError(
            report.problems,
            f"{report.refused} of {report.files} result file(s) refused (nothing in them was "
            "ingested)",
        )
    return report


def _record_reasks(ingests: Iterable[Ingest]) -> None:
    """An unusable reply with re-asks left is kept as a failure, so the next export asks again
    with it (an expired or failed line is simply exported again)."""
    for ing in ingests:
        for a in ing.asks:
            item = ing.todo.get(a.cid)
            if item is None or not a.turns:
                continue
            ing.cache.fail(
                FailureRecord(
                    item.key,
                    ing.j.identity,
                    *item.ids,
                    "bad_output",
                    a.attempt - 1,
                    "unusable reply; the next --export-batch asks again",
                    ing.j.backend.redact(a.turns[0].reply),
                )
            )
        ing.asks.clear()
