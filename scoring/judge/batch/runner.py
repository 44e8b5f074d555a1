"""Batch mode: submit what has neither a verdict nor a request in flight, collect every finished
batch, re-ask unusable replies, and record each batch's id and state in the ledger.

A :func:`step` is idempotent and any process may take it. A result is ingested only while its
pair has no verdict (a killed step taken again stores nothing twice); a batch is marked collected
only once every line is ingested, asked again or failed (none lost); a batch is recorded, with
its keys, before it is created, so a step killed in between finds it by what it carries instead
of paying twice. Batches no ledger row names are found in the account's listing
(:func:`adopt_strays`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import pyarrow as pa

from scoring.errors import BadReply, BatchError
from scoring.judge.backends import Completion, Turn
from scoring.judge.batch.api import (
    RESUBMIT_KINDS,
    SWEEP_PAGE_SIZE,
    SWEEP_PAGES,
    BatchBackend,
    BatchLine,
    BatchResult,
    Found,
    Limits,
    batch_backend,
    split,
)
from scoring.judge.batch.book import FOREIGN, MAX_READ_TRIES, PENDING, BatchBook, BatchRecord
from scoring.judge.cache import Ids, VerdictCache, VerdictSink
from scoring.judge.items import PairItem, Requested, record_failure, verdict_record
from scoring.judge.judges import BuiltJudge
from scoring.judge.outcome import JudgeStats
from scoring.judge.progress import ProgressSink
from scoring.judge.prompt import parse_reply
from scoring.ledger import custom_id, key_from_custom_id, keys_array
from scoring.ledger.records import now, request_ids
from scoring.verdicts import Verdict

#: Replies per check at most: the first ask and two re-asks (as in direct mode).
MAX_ATTEMPTS = 3
#: Verdicts ingested per cache transaction.
COMMIT_EVERY = 2000


@dataclass(frozen=True, slots=True)
class Ask:
    """One request to submit: which (response, check) (its custom id), which attempt, and the
    re-ask turn when it is one."""

    cid: str
    attempt: int
    turns: tuple[Turn, ...] = ()


class Ingest:
    """Turns results into verdicts, failures, re-asks and resubmissions for one judge."""

    def __init__(
        self,
        j: BuiltJudge,
        todo: dict[str, PairItem],
        cache: VerdictSink,
        stats: JudgeStats,
        progress: ProgressSink,
    ) -> None:
        self.j, self.todo, self.cache, self.stats, self.progress = j, todo, cache, stats, progress
        self.others: dict[str, Requested] = {}
        self.asks: list[Ask] = []
        self.failed: set[str] = set()
        #: where the verdicts come from, as the ledger records it
        self.source = "batch"

    def one(self, res: BatchResult, attempt: int) -> bool:
        """Ingest one result of ``attempt``; False when its id is neither an open request of this
        run nor a request of the batch being collected that has no verdict yet."""
        cid = res.custom_id
        own = self.todo.get(cid)
        item: PairItem | Requested | None = own if own is not None else self.others.get(cid)
        if item is None:
            self.stats.ignored_results += 1
            return False
        comp = res.completion
        s = self.stats
        if comp is not None:
            s.calls += 1
            s.tokens_in += comp.tokens_in
            s.tokens_cached += comp.tokens_cached
            s.tokens_out += comp.tokens_out
            try:
                reply = parse_reply(comp.text)
            except BadReply as exc:
                turn = Turn(comp.text, self.j.template.render_reask(str(exc)))
                self._unusable(cid, attempt, str(exc), comp.text, (turn,))
                return True
            self.verdict(item, reply.verdict, comp, attempt, reply.rationale)
            if own is not None:
                del self.todo[cid]
                s.judged += 1
                self.progress.advance(self.j.name, True)
            else:
                del self.others[cid]
                s.judged_for_others += 1
        elif res.error_kind == "bad_body":
            s.calls += 1
            self._unusable(cid, attempt, res.message, res.raw, ())
        elif res.error_kind in RESUBMIT_KINDS:
            self.again(cid, attempt, res.message)
        else:
            self.fail(cid, res.error_kind or "rejected", res.message, res.raw, attempt)
        return True

    def verdict(
        self,
        item: PairItem | Requested,
        verdict: Verdict,
        comp: Completion,
        attempt: int,
        rationale: str,
    ) -> None:
        """Store the verdict of ``item`` (the ``attempt``-th reply, ``comp``) in the sink."""
        self.cache.put(
            verdict_record(
                item,
                verdict=verdict,
                model=comp.model,
                source=self.source,
                tokens_in=comp.tokens_in,
                tokens_cached=comp.tokens_cached,
                tokens_out=comp.tokens_out,
                calls=attempt,
                latency_s=0.0,
                rationale=rationale,
            ),
            commit=False,
        )

    def again(self, cid: str, attempt: int, message: str = "no result") -> None:
        """Ask ``cid`` again without counting an attempt; another run's request is recorded as
        failed (``api_error``) for that run to ask."""
        if cid in self.todo:
            self.stats.resubmitted += 1
            self.asks.append(Ask(cid, attempt))
        elif cid in self.others:
            self.fail(cid, "api_error", message, "", attempt)

    def _unusable(
        self, cid: str, attempt: int, error: str, raw: str, turns: tuple[Turn, ...]
    ) -> None:
        if attempt < MAX_ATTEMPTS and cid in self.todo:
            self.stats.reasks += 1
            self.asks.append(Ask(cid, attempt + 1, turns))
        else:
            msg = f"no valid verdict after {attempt} replies; last: {error}"
            self.fail(cid, "bad_output", msg, raw, attempt)

    def fail(self, cid: str, kind: str, message: str, raw: str, calls: int) -> None:
        """Record that the request ``cid`` failed for good (in this run); another run's request
        is recorded in the ledger without being listed as this run's failure."""
        own = self.todo.get(cid)
        if own is None:
            other = self.others.pop(cid)
            record_failure(self.j, other, self.cache, None, kind, message, raw, calls)
            self.stats.failed_for_others += 1
            return
        record_failure(self.j, own, self.cache, self.stats, kind, message, raw, calls)
        self.failed.add(cid)
        self.progress.advance(self.j.name, False)


def others_of(
    j: BuiltJudge, rec: BatchRecord, todo: dict[str, PairItem], cache: VerdictCache
) -> dict[str, Requested]:
    """The requests of ``rec`` that this run does not plan and that have no verdict yet, with the
    ids the record gives them."""
    if len(rec.requests) != len(rec.keys):
        return {}
    rows = [i for i, k in enumerate(rec.keys) if custom_id(k) not in todo]
    if not rows:
        return {}
    keys = keys_array([rec.keys[i] for i in rows])
    done = cache.ledger.key_index()[0].contains(keys) | cache.pending_index().contains(keys)
    rows = [i for i, judged in zip(rows, done.tolist(), strict=True) if not judged]
    ids = rec.requests.take(pa.array(rows, pa.int64())).flatten()
    out = {}
    for i, sid, setting, qid, check_id in zip(rows, *(c.to_pylist() for c in ids), strict=True):
        key = rec.keys[i]
        out[custom_id(key)] = Requested(key, j.identity, Ids(j.name, sid, setting, qid, check_id))
    return out


def chunk_tag(lines: list[BatchLine], run: str = "") -> str:
    """The chunk's name: a digest of its custom ids and the submitting run's random id, so the
    same requests submitted again (after a batch was lost) carry another tag."""
    h = hashlib.sha256(run.encode())
    for ln in lines:
        h.update(ln.custom_id.encode())
    return h.hexdigest()[:32]


def lines_of(api: BatchBackend, todo: dict[str, PairItem], asks: list[Ask]) -> Iterator[BatchLine]:
    """Each ask as a batch line, its body from the judge backend's one body builder."""
    for a in asks:
        it = todo[a.cid]
        yield api.line(a.cid, api.batch_body(it.plan.request(it.pair), a.turns))


def submit(
    j: BuiltJudge,
    api: BatchBackend,
    book: BatchBook,
    todo: dict[str, PairItem],
    asks: list[Ask],
    stats: JudgeStats,
) -> list[BatchRecord]:
    """Submit ``asks`` in batches within the provider's limits, one attempt per batch; each
    batch is recorded (with its keys) before it is created, and again with the provider's id."""
    out: list[BatchRecord] = []
    run = secrets.token_hex(8)
    limits = api.limits  # lowered by the judge's batch_max_requests
    if j.config.batch_max_requests is not None:
        limits = Limits(min(limits.max_requests, j.config.batch_max_requests), limits.max_bytes)
    for attempt in sorted({a.attempt for a in asks}):
        mine = [a for a in asks if a.attempt == attempt]
        for chunk in split(lines_of(api, todo, mine), limits):
            tag = chunk_tag(chunk, run)
            items = [todo[ln.custom_id] for ln in chunk]
            rec = _record(j, tag, PENDING + tag, "submitting", items, attempt, run)
            book.record(rec, with_keys=True)
            made = rec.moved("submitted", api.submit(chunk, tag))
            del chunk, items
            book.record(rec.moved("created"), made, with_keys=True)
            out.append(made)
            stats.batches_submitted += 1
            stats.submitted += rec.n_requests
    return out


def _record(
    j: BuiltJudge,
    tag: str,
    batch_id: str,
    state: str,
    items: list[PairItem],
    attempt: int = 1,
    run: str = "",
) -> BatchRecord:
    """The record of a batch of ``items`` (with their keys and public ids)."""
    return BatchRecord(
        tag,
        batch_id,
        j.name,
        j.identity,
        j.config.provider,
        state,
        tuple(it.key for it in items),
        attempt,
        tuple(sorted({it.ids.submission_id for it in items})),
        now(),
        request_ids(
            [it.ids.submission_id for it in items],
            [it.ids.setting for it in items],
            [it.ids.question_id for it in items],
            [it.ids.check_id for it in items],
        ),
        run,
    )


def adopt_strays(
    j: BuiltJudge,
    api: BatchBackend,
    book: BatchBook,
    cache: VerdictCache,
    todo: dict[str, PairItem],
    notes: list[str],
) -> list[BatchRecord]:
    """The finished batches on the account that no ledger row names and that carry requests of
    ``todo`` (a job killed before recording one): each is recorded, as a first ask, and collected
    as any other, so never twice."""
    known = {s.batch_id for s in book.ledger.batch_states()}
    try:
        strays = [b.batch_id for b in api.listed(SWEEP_PAGES, SWEEP_PAGE_SIZE) if b.finished]
    except BatchError as exc:
        notes.append(f"cannot list the batches on the account: {exc}")
        return []
    out, foreign = [], []
    for bid in strays:
        if bid in known:
            continue
        try:
            cids = _carried(api, bid, todo, cache)
        except BatchError as exc:
            notes.append(f"cannot read the results of unrecorded batch {bid}: {exc}")
            continue
        if cids is None:
            foreign.append(_record(j, bid, bid, FOREIGN, []))
        elif cids:
            out.append(_record(j, bid, bid, "submitted", [todo[c] for c in cids]))
    if out or foreign:
        book.record(*out, *foreign, with_keys=True)
    if out:
        notes.append(
            f"adopted {len(out)} unrecorded batch(es): {', '.join(r.batch_id for r in out)}"
        )
    return out


def _carried(
    api: BatchBackend, bid: str, todo: dict[str, PairItem], cache: VerdictCache
) -> list[str] | None:
    """The custom ids of ``todo`` that ``bid``'s results carry; [] when it carries an open request
    not in ``todo`` or too many results; None when a custom id is no key (another project's)."""
    mine: dict[str, None] = {}
    rest: list[bytes] = []
    for n, res in enumerate(api.results(bid)):
        if n >= api.limits.max_requests:
            return []
        if res.custom_id in todo:
            mine[res.custom_id] = None
            continue
        try:
            rest.append(key_from_custom_id(res.custom_id))
        except ValueError:
            return None
        if len(rest) == 1024:
            if not _judged(rest, cache):
                return []
            rest = []
    return list(mine) if not rest or _judged(rest, cache) else []


def _judged(keys: list[bytes], cache: VerdictCache) -> bool:
    """Whether every one of ``keys`` has a verdict (in the ledger or the working index)."""
    ka = keys_array(keys)
    done = cache.ledger.key_index()[0].contains(ka) | cache.pending_index().contains(ka)
    return bool(done.all())


def step(
    j: BuiltJudge,
    api: BatchBackend,
    book: BatchBook,
    cache: VerdictCache,
    todo: dict[str, PairItem],
    stats: JudgeStats,
    progress: ProgressSink,
    skip: set[str],
    collect_only: bool = False,
    sweep: bool = False,
) -> int:
    """One collect-and-submit step for one judge; returns this run's requests still in flight (those
    of ``todo``: another run's requests in flight are theirs to count)."""
    visit = _Visit(j, api, book, cache, Ingest(j, todo, cache, stats, progress), skip)
    for rec in book.open_batches(j.identity):
        if rec.state != "submitting":
            visit(rec)
            continue
        made = visit.recover(rec)
        for r in made:
            visit(r)
    if sweep and todo:
        for rec in adopt_strays(j, api, book, cache, todo, stats.notes):
            visit(rec)
    ingest, still = visit.ingest, visit.still
    skip |= ingest.failed
    in_flight = {cid for rec in still for cid in rec.custom_ids}
    asks = [a for a in ingest.asks if a.cid in todo and a.cid not in ingest.failed]
    if not collect_only:
        queued = {a.cid for a in asks}
        asks += [Ask(c, 1) for c in todo if c not in queued and c not in skip]
    asks = [a for a in asks if a.cid not in in_flight]
    new = submit(j, api, book, todo, asks, stats)
    if visit.collected:
        book.record(*visit.collected)
    if collect_only:
        asked = {a.cid for a in asks}
        stats.waiting = sum(1 for c in todo if c not in in_flight and c not in asked)
    return sum(1 for c in in_flight if c in todo) + sum(r.n_requests for r in new)


@dataclass
class _Visit:
    """One step's visit of a judge's open batches: each batch fails alone (a provider error
    about one batch leaves it in flight, noted, and the others are still collected)."""

    j: BuiltJudge
    api: BatchBackend
    book: BatchBook
    cache: VerdictCache
    ingest: Ingest
    skip: set[str]
    collected: list[BatchRecord] = field(default_factory=list)
    still: list[BatchRecord] = field(default_factory=list)

    def recover(self, rec: BatchRecord) -> list[BatchRecord]:
        """The batches of a ``submitting`` record shown to carry its requests (the first its own,
        any other a copy another job made); none while one may still be running; ``lost`` if
        none."""
        known = frozenset(r.batch_id for r in self.book.latest(self.j.identity))
        try:
            found = self.api.find(
                rec.tag, rec.created_at.timestamp(), frozenset(rec.custom_ids), known
            )
        except BatchError as exc:
            self._note(f"cannot look for the batch of {rec.batch_id}: {exc}")
            found = Found((), waiting=True)
        if found.waiting:
            self.still.append(rec)
            return []
        if not found.batch_ids:
            self.book.record(rec.moved("lost"))
            return []
        made = [rec.moved("submitted", bid) for bid in found.batch_ids]
        self.book.record(rec.moved("created"), *made, with_keys=True)
        return made

    def __call__(self, rec: BatchRecord) -> None:
        """Collect ``rec`` if it has finished; keep it in flight otherwise."""
        try:
            st = self.api.status(rec.batch_id)
        except BatchError as exc:
            self._note(f"cannot read the state of batch {rec.batch_id}: {exc}")
            self.still.append(rec)
            return
        if not st.finished:
            if st.state != rec.state:
                rec = rec.moved(st.state)
                self.book.record(rec)
            self.still.append(rec)
            return
        ing, stats = self.ingest, self.ingest.stats
        ing.others = others_of(self.j, rec, ing.todo, self.cache)
        asked = len(ing.asks)
        try:
            _collect(self.api, rec, st.failed, st.message, ing, self.cache, self.skip)
        except BatchError as exc:
            del ing.asks[asked:]  # read again next step (what was stored stays stored)
            self._unreadable(replace(rec, tries=rec.tries + 1), str(exc))
            return
        finally:
            ing.others = {}
        stats.batches_collected += 1
        self.collected.append(rec.moved("collected"))

    def _unreadable(self, rec: BatchRecord, why: str) -> None:
        """A finished batch whose results could not be read: kept in flight, and after
        :data:`MAX_READ_TRIES` given up, its requests without a verdict asked again."""
        self._note(
            f"cannot read the results of batch {rec.batch_id} (try {rec.tries} of "
            f"{MAX_READ_TRIES}): {why}"
        )
        if rec.tries < MAX_READ_TRIES:
            self.book.record(rec)
            self.still.append(rec)
            return
        ing = self.ingest
        ing.others = others_of(self.j, rec, ing.todo, self.cache)
        for cid in rec.custom_ids:
            if cid not in self.skip:
                ing.again(cid, rec.attempt, f"batch {rec.batch_id}: results unreadable")
        ing.others = {}
        ing.stats.unreadable.append(rec.batch_id)
        self.book.record(rec.moved("unreadable"))

    def _note(self, text: str) -> None:
        self.ingest.stats.notes.append(text)


def _collect(
    api: BatchBackend,
    rec: BatchRecord,
    failed: bool,
    message: str,
    ingest: Ingest,
    cache: VerdictCache,
    skip: set[str],
) -> None:
    """Ingest every result of a finished batch; a request without a result is asked again (or,
    another run's, recorded as failed), so every line is accounted for."""
    seen: set[str] = set()
    stats = ingest.stats
    cache.begin()
    try:
        if failed:
            for cid in rec.custom_ids:
                if cid in ingest.todo or cid in ingest.others:
                    seen.add(cid)
                    why = f"batch {rec.batch_id} failed: {message}"
                    ingest.fail(cid, "rejected", why, "", rec.attempt)
            return
        n = 0
        for res in api.results(rec.batch_id):
            # (a failure already recorded in this run: this batch is being read again)
            if res.custom_id in seen or (res.custom_id in skip and res.completion is None):
                stats.ignored_results += 1
                continue
            seen.add(res.custom_id)
            ingest.one(res, rec.attempt)
            n += 1
            if n % COMMIT_EVERY == 0:
                cache.commit()
                cache.begin()
        for cid in rec.custom_ids:
            if cid not in seen and cid not in skip:
                ingest.again(cid, rec.attempt)
    finally:
        cache.commit()


def pending_items(items: list[PairItem]) -> dict[str, PairItem]:
    """The planner's items by custom id."""
    return {custom_id(it.key): it for it in items}


def run_batch_judges(
    plans: list[tuple[BuiltJudge, list[PairItem], JudgeStats]],
    cache: VerdictCache,
    book: BatchBook,
    progress: ProgressSink,
    *,
    wait_s: float | None = None,
    poll_s: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    collect_only: bool = False,
) -> None:
    """Take one step for every batch-mode judge; with ``wait_s``, poll every ``poll_s`` seconds
    until nothing is in flight or ``wait_s`` has passed."""
    apis: dict[str, BatchBackend] = {}
    try:
        for j, _, _ in plans:
            apis[j.name] = batch_backend(j.backend)
            apis[j.name].held = cache.ledger.held
        todos = {j.name: pending_items(items) for j, items, _ in plans}
        skips: dict[str, set[str]] = {j.name: set() for j, _, _ in plans}
        end = None if wait_s is None else time.monotonic() + wait_s
        first = True
        while True:
            for j, _, stats in plans:
                stats.in_flight = step(
                    j,
                    apis[j.name],
                    book,
                    cache,
                    todos[j.name],
                    stats,
                    progress,
                    skips[j.name],
                    collect_only,
                    sweep=first,
                )
            first = False
            busy = sum(s.in_flight for _, _, s in plans)
            if end is None or not busy or time.monotonic() + poll_s > end:
                return
            sleep(poll_s)
    finally:
        for j, _, stats in plans:
            stats.notes += apis[j.name].notes if j.name in apis else []
        for api in apis.values():
            api.close_batches()
