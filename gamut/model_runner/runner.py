"""Run a model over the public questions into a submission's response files."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gamut.model_runner.plan import (
    Failure,
    GenerateOptions,
    GenerateResult,
    Plan,
    Reporter,
    backend_settings,
    prepare,
)
from gamut.model_runner.provenance import production_record, record_production
from scoring.errors import CallFailed
from scoring.judge import providers
from scoring.judge.generation import Generator, Reply, Request
from scoring.layout import SubmissionFolder
from scoring.questions import Question, Setting
from scoring.submissions import Limits

if TYPE_CHECKING:
    from gamut.project import Project

#: Largest UTF-8 size of one response the validator accepts.
MAX_RESPONSE_BYTES = Limits().max_response_bytes
# Control characters the validator rejects (all but newline and tab).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_response(text: str) -> str:
    """Normalise line ends and drop control characters the submission format forbids."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


async def _ask(backend: Generator, request: Request, reply_retries: int) -> Reply:
    """One answer. An empty or malformed reply is asked again, then counted as a failure."""
    reason = ""
    for _ in range(reply_retries + 1):
        try:
            reply = await backend.answer(request)
        except CallFailed as exc:
            if not exc.retry:
                raise
            reason = str(exc)
            continue
        text = clean_response(reply.text)
        if not text.strip():
            reason = "empty reply"
            continue
        if len(text.encode("utf-8")) > MAX_RESPONSE_BYTES:
            raise CallFailed(f"reply larger than {MAX_RESPONSE_BYTES} bytes; lower --max-tokens")
        return Reply(text, reply.input_tokens, reply.output_tokens, reply.usage_reported)
    raise CallFailed(f"{reason} ({reply_retries + 1} attempts)")


Answer = tuple[Setting, str, Reply]


async def _write_answers(
    plan: Plan, inbox: asyncio.Queue[Answer | None], reporter: Reporter | None
) -> None:
    """Append answers as they arrive: what queued up during one write goes in the next batch."""
    while True:
        batch = [await inbox.get()]
        while not inbox.empty():
            batch.append(inbox.get_nowait())
        answers = [a for a in batch if a is not None]
        for setting in plan.files:
            mine = [
                (qid, r.text, (r.input_tokens, r.output_tokens) if r.usage_reported else None)
                for s, qid, r in answers
                if s is setting
            ]
            if not mine:
                continue
            plan.files[setting].append_many(mine)
            stats = plan.stats[setting]
            for s, _, r in answers:
                if s is setting:
                    stats.done += 1
                    stats.input_tokens += r.input_tokens
                    stats.output_tokens += r.output_tokens
            if reporter is not None:
                reporter.update(stats)
        if len(answers) < len(batch):
            return


async def run(plan: Plan, backend: Generator, reporter: Reporter | None = None) -> GenerateResult:
    """Answer every question the plan still needs, ``options.concurrency`` calls at a time."""
    o = plan.options
    t0 = time.monotonic()
    todo: asyncio.Queue[tuple[Setting, Question]] = asyncio.Queue()
    for setting, qs in plan.todo.items():
        for q in qs:
            todo.put_nowait((setting, q))
    inbox: asyncio.Queue[Answer | None] = asyncio.Queue()
    reasons: dict[tuple[Setting, str], str] = {}
    for s in plan.stats.values():
        s.started = time.monotonic()
        if reporter is not None:
            reporter.update(s)

    async def worker() -> None:
        while True:
            try:
                setting, q = todo.get_nowait()
            except asyncio.QueueEmpty:
                return
            image = plan.images.get(q.question_id) if setting is Setting.MULTIMODAL else None
            try:
                reply = await _ask(backend, Request(q.prompt(setting), image), o.reply_retries)
            except CallFailed as exc:
                reasons[(setting, q.question_id)] = str(exc)
                plan.stats[setting].failed += 1
                if reporter is not None:
                    reporter.update(plan.stats[setting])
            else:
                inbox.put_nowait((setting, q.question_id, reply))

    writer = asyncio.create_task(_write_answers(plan, inbox, reporter))
    n_workers = max(1, min(o.concurrency, todo.qsize()))
    tasks = [asyncio.create_task(worker()) for _ in range(n_workers)]

    def _writer_failed(t: asyncio.Task[None]) -> None:
        if not t.cancelled() and t.exception() is not None:
            for w in tasks:  # no point in calling on when answers cannot be saved
                w.cancel()

    writer.add_done_callback(_writer_failed)
    fatal: BaseException | None = None
    try:
        done, _ = await asyncio.wait(
            tasks, timeout=o.deadline_s, return_when=asyncio.FIRST_EXCEPTION
        )
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                fatal = t.exception()
                break
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        inbox.put_nowait(None)  # answers already received are written, then the writer stops
        await asyncio.shield(writer)
        with contextlib.suppress(Exception):
            await backend.aclose()
    if fatal is not None:
        raise fatal
    return _result(plan, reasons, time.monotonic() - t0)


def _result(plan: Plan, reasons: dict[tuple[Setting, str], str], elapsed: float) -> GenerateResult:
    """Count from the files themselves: a question is answered iff its line is on disk."""
    failures: list[Failure] = []
    for setting, qs in plan.todo.items():
        answered = plan.files[setting].answered
        stats = plan.stats[setting]
        missing = [q.question_id for q in qs if q.question_id not in answered]
        stats.done = len(qs) - len(missing)
        stats.failed = len(missing)
        for qid in missing:
            reason = reasons.get((setting, qid), "not answered before the deadline")
            failures.append(Failure(setting, qid, reason))
    files = {s: f.path for s, f in plan.files.items()}
    return GenerateResult(plan.stats, failures, files, elapsed)


def generate(
    project: Project,
    options: GenerateOptions,
    reporter: Reporter | None = None,
    environ: Mapping[str, str] | None = None,
    today: dt.date | None = None,
) -> GenerateResult:
    """Check, record provenance, then answer every unanswered question (``gamut generate``)."""
    plan = prepare(project, options, environ)
    try:
        day = today or dt.date.today()
        o = options
        record = production_record(
            o.signature, o.sampling_temperature, o.max_tokens, o.system_prompt, day
        )
        record_production(
            SubmissionFolder(plan.folder).metadata, plan.metadata, record, o.model_name, day
        )
        backend = providers.generator_class(o.provider)(backend_settings(plan))
        return asyncio.run(run(plan, backend, reporter))
    finally:
        plan.close()
