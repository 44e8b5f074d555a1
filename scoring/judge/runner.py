"""Running the judges: plan from the ledger, call what has no verdict, commit each verdict."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.errors import BackendError, BadReply, ErrorKind, Stopped
from scoring.judge.backends import BulkReply, Turn
from scoring.judge.cache import VerdictCache
from scoring.judge.items import PairItem, pair_items, record_failure, verdict_record
from scoring.judge.judges import BuiltJudge
from scoring.judge.outcome import JudgeReport, JudgeStats
from scoring.judge.pacing import Pacer
from scoring.judge.pairs import BulkBackend, PairPlan
from scoring.judge.progress import PlainProgress, ProgressSink
from scoring.judge.prompt import parse_reply
from scoring.ledger import KeyIndex, Ledger, key_bytes
from scoring.ledger.records import now as now_utc
from scoring.ledger.records import verdict_schema

if TYPE_CHECKING:
    from scoring.judge.batch.book import BatchBook

#: Re-asks after an unusable reply (so at most 1 + MAX_REASKS replies per check).
MAX_REASKS = 2
#: Output tokens assumed per call by ``--dry-run``.
EST_TOKENS_OUT = 60
_BATCH = 500  # commit size for backends that never call out
#: Verdicts kept in the working index before they are shipped to a ledger shard.
FLUSH_EVERY = 10_000


def _plan(
    plan: PairPlan, known: KeyIndex, pending: KeyIndex, stats: JudgeStats
) -> npt.NDArray[np.int64]:
    """The pairs of ``plan`` with no verdict (in the ledger or pending in the index)."""
    n = len(plan)
    n_empty = int(plan.empty.sum())
    stats.checks += n
    stats.empty += n_empty
    done = (plan.rows_in(known) >= 0) | pending.contains(plan)
    todo = np.flatnonzero(~done & ~plan.empty)
    stats.cache_hits += n - n_empty - len(todo)
    stats.planned = len(todo)
    if len(todo):
        units, checks = plan.units, plan.table.checks
        unit_chars = np.fromiter((len(u.question) + len(u.response) for u in units), np.int64)
        check_chars = np.fromiter((len(c.text) for c in checks), np.int64)
        chars = unit_chars[plan.unit[todo]] + check_chars[plan.check[todo]]
        stats.est_tokens_in = int(chars.sum()) // 4 + 150 * len(todo)
    stats.est_tokens_out = EST_TOKENS_OUT * len(todo)
    return todo


async def _judge_one(
    j: BuiltJudge,
    item: PairItem,
    cache: VerdictCache,
    stats: JudgeStats,
    commit: bool,
    pacer: Pacer,
) -> bool:
    """Get one verdict (re-asking for unusable output) and store it, or store the failure (its words
    reduced, with held rubrics, by :func:`~scoring.judge.items.record_failure`)."""
    request = item.plan.request(item.pair)
    turns: tuple[Turn, ...] = ()
    calls = tin = tcached = tout = 0
    last_err, last_raw = "", ""
    t0 = time.perf_counter()
    fail_kind = "bad_output"
    for _ in range(1 + MAX_REASKS):
        calls += 1
        try:
            comp = await pacer.ask(request, turns)
        except Stopped:
            calls -= 1
            if not calls:
                raise
            break  # stopped between re-asks: a failure, with the last unusable reply
        except BackendError as exc:
            if exc.kind is not ErrorKind.BAD_BODY:
                fail_kind, last_err, last_raw = exc.kind.value, str(exc), exc.raw
                break
            last_err, last_raw = f"the provider's reply body was unusable: {exc}", exc.raw
            continue
        tin, tcached, tout = (
            tin + comp.tokens_in,
            tcached + comp.tokens_cached,
            tout + comp.tokens_out,
        )
        try:
            reply = parse_reply(comp.text)
        except BadReply as exc:
            pacer.failed(None, str(exc))
            last_err, last_raw = str(exc), comp.text
            turns = (*turns, Turn(comp.text, j.template.render_reask(str(exc))))
            continue
        pacer.ok()
        latency = time.perf_counter() - t0
        cache.put(
            verdict_record(
                item,
                verdict=reply.verdict,
                model=comp.model,
                source="direct" if j.backend.calls_out else "replay",
                tokens_in=tin,
                tokens_cached=tcached,
                tokens_out=tout,
                calls=calls,
                latency_s=latency,
                rationale=reply.rationale,
            ),
            commit=commit,
        )
        _count(stats, calls, tin, tcached, tout, latency)
        stats.judged += 1
        return True
    else:
        last_err = f"no valid verdict after {calls} replies; last: {last_err}"
    _count(stats, calls, tin, tcached, tout, time.perf_counter() - t0)
    record_failure(j, item, cache, stats, fail_kind, last_err, last_raw, calls)
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


def _judge_bulk(
    plan: PairPlan,
    todo: npt.NDArray[np.int64],
    reply: BulkReply,
    ledger: Ledger,
    cache: VerdictCache,
    stats: JudgeStats,
    progress: ProgressSink,
) -> None:
    """Store a bulk reply (a backend that answers every pair at once) as one ledger shard."""
    j = plan.judge
    ok = todo[reply.found]
    n = len(ok)
    stamp = np.datetime64(int(now_utc().timestamp() * 1e6), "us")
    cols: dict[str, pa.Array] = {
        "key": pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(32), n, [None, pa.py_buffer(plan.keys_of(ok))]
        ),
        "judge_identity": pa.array([j.identity] * n, pa.string()),
        "judge": pa.array([j.name] * n, pa.string()),
        **plan.id_columns(ok),
        "verdict": pa.array(reply.codes[reply.found], pa.int8()),
        "model": pa.array([reply.model] * n, pa.string()),
        "source": pa.array(["replay"] * n, pa.string()),
        "tokens_in": pa.array(np.zeros(n, np.int64)),
        "tokens_cached": pa.array(np.zeros(n, np.int64)),
        "tokens_out": pa.array(np.zeros(n, np.int64)),
        "calls": pa.array(np.ones(n, np.int32)),
        "latency_s": pa.array(np.zeros(n)),
        "created_at": pa.array(np.full(n, stamp)).cast(pa.timestamp("us", tz="UTC")),
    }
    if not ledger.held:
        rat = reply.rationales
        cols["rationale"] = pa.array(
            np.full(n, "replayed", dtype=object) if rat is None else rat[reply.found],
            pa.string(),
        )
    sch = verdict_schema(ledger.held)
    ledger.append_verdicts(pa.table([cols[f.name] for f in sch], schema=sch))
    stats.judged += n
    stats.calls += n
    missed = todo[~reply.found]
    for item in pair_items(plan, missed):
        i = item.ids
        message = (
            f"no stored verdict for {i.submission_id}/{i.setting}/{i.question_id}/"
            f"{i.check_id} in the replay file of judge {j.name!r}"
        )
        record_failure(j, item, cache, stats, "rejected", message, "", 1)
    progress.advance(j.name, True, n)
    if len(missed):
        progress.advance(j.name, False, len(missed))


async def _run_judge(
    j: BuiltJudge,
    items: list[PairItem],
    cache: VerdictCache,
    stats: JudgeStats,
    progress: ProgressSink,
    deadline_s: float | None,
    held: bool = False,
) -> None:
    queue = iter(items)
    calls_out = j.backend.calls_out
    n_workers = min(j.config.max_concurrency if calls_out else 1, len(items))
    pacer = Pacer(j.backend, held)
    started = 0

    async def worker() -> None:
        nonlocal started
        for item in queue:
            started += 1
            try:
                ok = await _judge_one(j, item, cache, stats, calls_out, pacer)
            except Stopped:
                stats.unfinished += 1
                continue
            except asyncio.CancelledError:
                record_failure(
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
            if calls_out and started % FLUSH_EVERY == 0:
                cache.flush()

    if not calls_out:
        cache.begin()
    try:
        async with asyncio.timeout(deadline_s):
            await asyncio.gather(*(worker() for _ in range(n_workers)))
    except TimeoutError:
        stats.unfinished += len(items) - started
    finally:
        stats.stopped = pacer.breaker.stopped
        stats.rate_limited = pacer.limiter.slowed
        if not calls_out:
            cache.commit()
        await j.backend.aclose()


def _estimate(plan: PairPlan, todo: npt.NDArray[np.int64], stats: JudgeStats) -> None:
    """Cacheable input tokens of the planned calls (the shared part of a response's prompt is
    cached by the provider after its first check), and the estimated cost in each mode."""
    if len(todo):
        units = plan.unit[todo]
        uniq, counts = np.unique(units, return_counts=True)
        t = plan.judge.template
        shared = np.fromiter(
            (len(t.system) + len(plan.units[int(u)].question) + len(plan.units[int(u)].response)
             for u in uniq),
            np.int64,
            len(uniq),
        )  # fmt: skip
        stats.est_tokens_cached = int(((counts - 1) * shared).sum()) // 4
    for mode in ("direct", "batch"):
        stats.est_cost[mode] = plan.judge.config.cost(
            mode,
            stats.est_tokens_in,
            stats.est_tokens_cached,
            stats.est_tokens_out,
        )


def _dry_run_batch(stats: JudgeStats, n_flying: int) -> None:
    """A batch judge's dry run counts only what it would submit (not what is in flight)."""
    if not n_flying or not stats.planned:
        return
    share = max(stats.planned - n_flying, 0) / stats.planned
    stats.planned -= min(n_flying, stats.planned)
    stats.est_tokens_in = round(stats.est_tokens_in * share)
    stats.est_tokens_out = round(stats.est_tokens_out * share)


def _plan_judge(
    p: PairPlan,
    known: KeyIndex,
    pending: KeyIndex,
    book: BatchBook | None,
    dry_run: bool,
    collect_only: bool,
) -> tuple[npt.NDArray[np.int64], JudgeStats]:
    """One judge's pairs to ask, and its planned counts and cost (``book``: the batch records,
    for a dry run)."""
    j = p.judge
    mode = j.config.mode if j.backend.calls_out else "offline"
    stats = JudgeStats(j.name, j.label, j.identity, mode=mode)
    todo = _plan(p, known, pending, stats)
    if j.config.mode == "batch":
        if book is not None:  # a real run's step counts what is in flight as it collects
            flying = {k for r in book.open_batches(j.identity) for k in r.keys}
            # this plan's requests in flight, by key (not another submission's)
            keys = key_bytes(p.keys_of(todo)) if flying else []
            stats.in_flight = sum(1 for k in keys if k in flying)
            _dry_run_batch(stats, stats.in_flight)
            if collect_only:
                stats.planned = 0
    elif collect_only:
        stats.waiting = 0 if dry_run else len(todo)
        todo = todo[:0]
        stats.planned = 0
    _estimate(p, todo, stats)
    return todo, stats


def judge_all(
    plans: list[PairPlan],
    ledger: Ledger,
    cache_path: Path,
    dry_run: bool = False,
    *,
    progress: ProgressSink | None = None,
    deadline_s: float | None = None,
    wait_s: float | None = None,
    poll_s: float = 60.0,
    collect_only: bool = False,
) -> JudgeReport:
    """Judge every (response, check) that has no verdict yet, for the planned judges."""
    t0 = time.perf_counter()
    report = JudgeReport({}, dry_run)
    with ledger.lock(), VerdictCache(cache_path, ledger) as cache:
        report.notes.extend(cache.notes)
        if not dry_run:
            cache.flush()  # what a killed run left behind
        work: list[tuple[PairPlan, npt.NDArray[np.int64], JudgeStats]] = []
        known, _ = ledger.key_index()
        pending = cache.pending_index()
        book = None
        if dry_run and any(p.judge.config.mode == "batch" for p in plans):
            from scoring.judge.batch.book import BatchBook

            book = BatchBook(ledger)
        for p in plans:
            todo, stats = _plan_judge(p, known, pending, book, dry_run, collect_only)
            work.append((p, todo, stats))
            report.judges[p.judge.name] = stats
        del known, pending
        if not dry_run:
            _run(work, ledger, cache, progress, deadline_s, wait_s, poll_s, collect_only)
            cache.flush()
            for p, _, stats in work:
                stats.cost = p.judge.config.cost(
                    stats.mode, stats.tokens_in, stats.tokens_cached, stats.tokens_out
                )
                report.notes.extend(stats.notes)
    report.elapsed_s = time.perf_counter() - t0
    return report


def _run(
    work: list[tuple[PairPlan, npt.NDArray[np.int64], JudgeStats]],
    ledger: Ledger,
    cache: VerdictCache,
    progress: ProgressSink | None,
    deadline_s: float | None,
    wait_s: float | None = None,
    poll_s: float = 60.0,
    collect_only: bool = False,
) -> None:
    sink = progress or PlainProgress()
    held = ledger.held  # rubrics held: provider errors keep their class and status only
    for p, todo, stats in work:
        sink.start(p.judge.name, len(todo), stats.cache_hits)
    batch = [(p.judge, pair_items(p, t), s) for p, t, s in work if p.judge.config.mode == "batch"]
    if batch:
        from scoring.judge.batch.book import BatchBook
        from scoring.judge.batch.runner import run_batch_judges

        run_batch_judges(
            batch,
            cache,
            BatchBook(ledger),
            sink,
            wait_s=wait_s,
            poll_s=poll_s,
            collect_only=collect_only,
        )
        work = [w for w in work if w[0].judge.config.mode != "batch"]

    def deadline(j: BuiltJudge) -> float | None:
        given = [d for d in (deadline_s, j.config.deadline_s) if d is not None]
        return min(given, default=None)

    async def run_all() -> None:
        # judges that answer in bulk, then those that never call out, run one at a time; the
        # others run together, each with its own limiter
        rest = []
        for p, todo, stats in work:
            j = p.judge
            if len(todo) and isinstance(j.backend, BulkBackend):
                _judge_bulk(p, todo, j.backend.bulk(p, todo), ledger, cache, stats, sink)
            elif not j.backend.calls_out:
                await _run_judge(j, pair_items(p, todo), cache, stats, sink, deadline(j), held)
            else:
                rest.append((p, pair_items(p, todo), stats))
        await asyncio.gather(
            *(
                _run_judge(p.judge, items, cache, stats, sink, deadline(p.judge), held)
                for p, items, stats in rest
            )
        )

    try:
        asyncio.run(run_all())
    finally:
        sink.close()
