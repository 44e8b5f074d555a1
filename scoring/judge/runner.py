"""Running the judges: plan from the cache, call what has no verdict, commit each verdict.

Per judge, ``max_concurrency`` workers (the judge's one named limiter) pull (response, check) pairs
from a shared queue. The SDKs retry 429/5xx/timeouts/dropped connections themselves
(``max_retries``, honouring ``Retry-After``); this layer adds what they lack: re-asks for unusable
output (at most two), a per-run deadline, and no retry of other 4xx. A verdict is never defaulted.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from scoring.judge.backends import BackendError, JudgeRequest, Turn
from scoring.judge.cache import Ids, VerdictCache
from scoring.judge.inputs import ResponseUnit
from scoring.judge.judges import BuiltJudge, check_keys
from scoring.judge.outcome import Failure, JudgeReport, JudgeStats
from scoring.judge.progress import PlainProgress, ProgressSink
from scoring.judge.prompt import BadReply, parse_reply
from scoring.judge.spec import JudgeConfig

#: Re-asks after an unusable reply (so at most 1 + MAX_REASKS replies per check).
MAX_REASKS = 2
#: Output tokens assumed per call by ``--dry-run``.
EST_TOKENS_OUT = 60
_BATCH = 500  # commit size for backends that never call out


@dataclass(frozen=True, slots=True)
class _Item:
    key: str
    ids: Ids
    request: JudgeRequest


def _plan(
    j: BuiltJudge, units: list[ResponseUnit], known: set[str], stats: JudgeStats
) -> list[_Item]:
    todo: list[_Item] = []
    t = j.template
    system = t.system
    for u in units:
        if not u.response.strip():
            stats.checks += len(u.checks)
            stats.empty += len(u.checks)
            continue
        shared: str | None = None
        for c, key in zip(u.checks, check_keys(j.identity, j.backend.keyed_by_ids, u), strict=True):
            stats.checks += 1
            if key in known:
                stats.cache_hits += 1
                continue
            if shared is None:
                shared = t.render_shared(u.question, u.response)
            req = JudgeRequest(
                u.submission_id,
                u.setting,
                u.question_id,
                c.check_id,
                c.kind,
                u.question,
                u.response,
                c.text,
                system,
                shared,
                t.render_check(c.text, c.kind),
            )
            ids = Ids(j.name, u.submission_id, u.setting.value, u.question_id, c.check_id)
            todo.append(_Item(key, ids, req))
    stats.planned = len(todo)
    for it in todo:
        r = it.request
        stats.est_tokens_in += (len(r.system) + len(r.shared) + len(r.check_prompt)) // 4
    stats.est_tokens_out = EST_TOKENS_OUT * len(todo)
    return todo


async def _judge_one(
    j: BuiltJudge, item: _Item, cache: VerdictCache, stats: JudgeStats, commit: bool
) -> bool:
    """Get one verdict (re-asking for unusable output) and store it, or store the failure."""
    turns: tuple[Turn, ...] = ()
    calls = tin = tcached = tout = 0
    last_err, last_raw = "", ""
    t0 = time.perf_counter()
    fail_kind = "bad_output"
    for _ in range(1 + MAX_REASKS):
        calls += 1
        try:
            comp = await j.backend.complete(item.request, turns)
        except BackendError as exc:
            if exc.kind != "bad_body":
                fail_kind, last_err, last_raw = exc.kind, str(exc), exc.raw
                break
            last_err, last_raw = "the provider's reply body was not valid JSON", exc.raw
            continue
        tin, tcached, tout = (
            tin + comp.tokens_in,
            tcached + comp.tokens_cached,
            tout + comp.tokens_out,
        )
        try:
            reply = parse_reply(comp.text)
        except BadReply as exc:
            last_err, last_raw = str(exc), comp.text
            turns = (*turns, Turn(comp.text, j.template.render_reask(str(exc))))
            continue
        latency = time.perf_counter() - t0
        cache.put(
            item.key,
            j.identity,
            item.ids,
            reply.verdict.value,
            reply.rationale,
            tokens_in=tin,
            tokens_cached=tcached,
            tokens_out=tout,
            latency_s=latency,
            calls=calls,
            commit=commit,
        )
        _count(stats, calls, tin, tcached, tout, latency)
        stats.judged += 1
        return True
    else:
        last_err = f"no valid verdict after {calls} replies; last: {last_err}"
    _count(stats, calls, tin, tcached, tout, time.perf_counter() - t0)
    _record_failure(j, item, cache, stats, fail_kind, last_err, last_raw, calls)
    return False


def _count(
    stats: JudgeStats, calls: int, tin: int, tcached: int, tout: int, latency: float
) -> None:
    stats.calls += calls
    stats.reasks += max(0, calls - 1)
    stats.tokens_in += tin
    stats.tokens_cached += tcached
    stats.tokens_out += tout
    stats.latency_s += latency


def _record_failure(
    j: BuiltJudge,
    item: _Item,
    cache: VerdictCache,
    stats: JudgeStats,
    kind: str,
    message: str,
    raw: str,
    calls: int,
) -> None:
    message, raw = j.backend.redact(message), j.backend.redact(raw)
    cache.fail(item.key, j.identity, item.ids, kind, message, raw, calls)
    i = item.ids
    stats.failures.append(
        Failure(j.name, i.submission_id, i.setting, i.question_id, i.check_id, kind, message, raw)
    )


async def _run_judge(
    j: BuiltJudge,
    items: list[_Item],
    cache: VerdictCache,
    stats: JudgeStats,
    progress: ProgressSink,
    deadline_s: float | None,
) -> None:
    queue = iter(items)
    calls_out = j.backend.calls_out
    n_workers = min(j.config.max_concurrency if calls_out else 1, len(items))
    started = 0

    async def worker() -> None:
        nonlocal started
        for item in queue:
            started += 1
            try:
                ok = await _judge_one(j, item, cache, stats, commit=calls_out)
            except asyncio.CancelledError:
                _record_failure(
                    j,
                    item,
                    cache,
                    stats,
                    "deadline",
                    "the run stopped (deadline or interrupt) while this call was in flight",
                    "",
                    1,
                )
                raise
            progress.advance(j.name, ok)
            if not calls_out and started % _BATCH == 0:
                cache.commit()
                cache.begin()

    if not calls_out:
        cache.begin()
    try:
        async with asyncio.timeout(deadline_s):
            await asyncio.gather(*(worker() for _ in range(n_workers)))
    except TimeoutError:
        stats.unfinished = len(items) - started
    finally:
        if not calls_out:
            cache.commit()
        await j.backend.aclose()


def _cost(j: JudgeConfig, s: JudgeStats) -> float | None:
    if j.price_in_per_mtok is None or j.price_out_per_mtok is None:
        return None
    cached_price = (
        j.price_cached_in_per_mtok
        if j.price_cached_in_per_mtok is not None
        else j.price_in_per_mtok
    )
    return (
        (s.tokens_in - s.tokens_cached) * j.price_in_per_mtok
        + s.tokens_cached * cached_price
        + s.tokens_out * j.price_out_per_mtok
    ) / 1e6


def judge_all(
    units: list[ResponseUnit],
    judges: list[BuiltJudge],
    cache_path: Path,
    dry_run: bool = False,
    *,
    progress: ProgressSink | None = None,
    deadline_s: float | None = None,
) -> JudgeReport:
    """Judge every (response, check) that has no verdict yet, for the named judges.

    Args:
        units: the responses to judge, each with its checks.
        judges: the judges, built by :func:`scoring.judge.build_judges`.
        cache_path: the verdict cache (SQLite file).
        dry_run: only count the calls and estimate their tokens; call nothing, write nothing.
        progress: where progress goes (default: plain lines on stderr).
        deadline_s: a deadline for the whole run, in seconds (a judge's ``deadline_s`` may be
            shorter).

    Returns:
        Per-judge counts, tokens, cost and failures. Verdicts are in the cache.
    """
    t0 = time.perf_counter()
    built = judges
    report = JudgeReport({}, dry_run)
    with VerdictCache(cache_path) as cache:
        plans: list[tuple[BuiltJudge, list[_Item], JudgeStats]] = []
        for j in built:
            stats = JudgeStats(j.name, j.label, j.identity)
            plans.append((j, _plan(j, units, cache.keys(j.identity), stats), stats))
            report.judges[j.name] = stats
        if not dry_run:
            sink = progress or PlainProgress()
            for j, items, stats in plans:
                sink.start(j.name, len(items), stats.cache_hits)

            def deadline(j: BuiltJudge) -> float | None:
                given = [d for d in (deadline_s, j.config.deadline_s) if d is not None]
                return min(given, default=None)

            async def run_all() -> None:
                # judges that never call out run one at a time (each commits in batches); the
                # others run together, each with its own limiter
                for j, items, stats in plans:
                    if not j.backend.calls_out:
                        await _run_judge(j, items, cache, stats, sink, deadline(j))
                await asyncio.gather(
                    *(
                        _run_judge(j, items, cache, stats, sink, deadline(j))
                        for j, items, stats in plans
                        if j.backend.calls_out
                    )
                )

            try:
                asyncio.run(run_all())
            finally:
                sink.close()
            for j, _, stats in plans:
                stats.cost = _cost(j.config, stats)
    report.elapsed_s = time.perf_counter() - t0
    return report


__all__ = [
    "EST_TOKENS_OUT",
    "MAX_REASKS",
    "Failure",
    "JudgeReport",
    "JudgeStats",
    "judge_all",
]
