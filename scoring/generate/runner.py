"""Run a model over the public questions into a submission's response files.

:func:`prepare` does every check before any call (questions, API key, existing response files,
images) and reports all problems at once; :func:`run` answers what is left with a bounded pool of
workers, appending each answer as it arrives; :func:`generate` does both and records provenance.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import re
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from scoring.config import GamutConfig
from scoring.errors import Problem, ProblemsError
from scoring.generate.backends import (
    DEFAULT_KEY_ENV,
    Backend,
    BackendSettings,
    CallFailed,
    Provider,
    Reply,
    Request,
    make_backend,
)
from scoring.generate.images import ImageRef, resolve_images
from scoring.generate.provenance import (
    METADATA_FILE,
    drift_problem,
    production_record,
    read_metadata,
    record_production,
    run_signature,
)
from scoring.generate.store import ResponseFile
from scoring.questions import Question, Setting, load_questions
from scoring.submission import SubmissionId

#: Largest UTF-8 size of one response the validator accepts.
MAX_RESPONSE_BYTES = 32 * 1024
# Control characters the validator rejects (all but newline and tab).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class GenerateOptions:
    """Everything that decides what is run and how (``gamut generate``'s options)."""

    submission_id: str
    model: str
    provider: Provider = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    settings: tuple[Setting, ...] = (Setting.MULTIMODAL, Setting.TEXT_ONLY)
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int = 2048
    concurrency: int = 8
    limit: int | None = None
    deadline_s: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    reply_retries: int = 2

    @property
    def sampling_temperature(self) -> float | None:
        """The temperature sent: 0 by default for chat completions; none for Anthropic Messages,
        whose API (as this SDK release describes it) takes no sampling parameters."""
        if self.provider == "anthropic":
            return None
        return 0.0 if self.temperature is None else self.temperature

    @property
    def key_env(self) -> str:
        """The environment variable that holds the API key."""
        return self.api_key_env or DEFAULT_KEY_ENV[self.provider]


@dataclass
class SettingStats:
    """Progress of one setting (what a progress bar shows)."""

    setting: Setting
    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def todo(self) -> int:
        """Questions this run has to answer."""
        return self.total - self.skipped

    @property
    def rate(self) -> float:
        """Answers per second so far."""
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0


@dataclass(frozen=True)
class Failure:
    """A question left unanswered, and why."""

    setting: Setting
    question_id: str
    reason: str


@dataclass
class GenerateResult:
    """What a run did."""

    stats: dict[Setting, SettingStats]
    failures: list[Failure]
    files: dict[Setting, Path]
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when every selected question of every setting has an answer."""
        return not self.failures


class Reporter(Protocol):
    """Receives progress; the CLI shows it as a progress bar or plain lines."""

    def update(self, stats: SettingStats) -> None:
        """Called after every answer or failure, and once per setting at the start."""


@dataclass
class Plan:
    """A checked run: open response files and the questions each setting still needs."""

    options: GenerateOptions
    folder: Path
    todo: dict[Setting, list[Question]]
    files: dict[Setting, ResponseFile]
    images: dict[str, ImageRef]
    stats: dict[Setting, SettingStats]
    metadata: dict[str, Any] | None
    api_key: str = field(repr=False)

    @property
    def signature(self) -> str:
        """What must match for answers to share a file (provider, model, decoding, prompt)."""
        o = self.options
        return run_signature(
            o.provider, o.model, o.sampling_temperature, o.max_tokens, o.system_prompt
        )

    def close(self) -> None:
        """Close the response files."""
        for f in self.files.values():
            f.close()


def response_path(folder: Path, setting: Setting) -> Path:
    """The response file of one setting in a submission folder (SPEC section 7)."""
    return folder / f"{setting.value}.jsonl"


def clean_response(text: str) -> str:
    """Normalise line ends and drop control characters the submission format forbids."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def prepare(
    cfg: GamutConfig, options: GenerateOptions, environ: Mapping[str, str] | None = None
) -> Plan:
    """Check everything a run needs before any model call.

    Raises:
        ProblemsError: every problem found (bad id, missing key, broken response file lines,
            missing or unreadable images), all at once.
    """
    env = os.environ if environ is None else environ
    problems: list[Problem] = []
    try:
        TypeAdapter(SubmissionId).validate_python(options.submission_id)
    except ValidationError:
        problems.append(
            Problem(
                "--submission",
                None,
                f"invalid id {options.submission_id!r}",
                "use 3 to 64 lowercase letters, digits, '-', '_' or '.'",
            )
        )
    if options.provider == "anthropic" and options.temperature is not None:
        problems.append(
            Problem(
                "--temperature",
                None,
                "the Anthropic Messages API takes no sampling parameters",
                "drop --temperature for --provider anthropic",
            )
        )
    api_key = env.get(options.key_env, "")
    if not api_key:
        problems.append(
            Problem(
                options.key_env,
                None,
                "environment variable not set",
                f"export {options.key_env}=... (any value for a local server "
                "without keys), or name another with --api-key-env",
            )
        )
    questions_file = cfg.path(cfg.benchmark.questions)
    questions = load_questions(questions_file)
    if options.limit is not None:
        questions = questions[: options.limit]
    ids = {q.question_id for q in questions}
    all_ids = {q.question_id for q in load_questions(questions_file)} if options.limit else ids
    folder = cfg.path(cfg.benchmark.submissions) / options.submission_id
    files: dict[Setting, ResponseFile] = {}
    for setting in dict.fromkeys(options.settings):
        f, file_problems = ResponseFile.open(response_path(folder, setting), all_ids)
        problems.extend(file_problems)
        if f is not None:
            files[setting] = f
    todo = {s: [q for q in questions if q.question_id not in f.answered] for s, f in files.items()}
    images: dict[str, ImageRef] = {}
    if Setting.MULTIMODAL in todo:
        images, image_problems = resolve_images(todo[Setting.MULTIMODAL], questions_file)
        problems.extend(image_problems)
    metadata, meta_problems = read_metadata(folder / METADATA_FILE)
    problems.extend(meta_problems)
    if any(f.answered for f in files.values()):
        signature = run_signature(
            options.provider,
            options.model,
            options.sampling_temperature,
            options.max_tokens,
            options.system_prompt,
        )
        drift = drift_problem(folder / METADATA_FILE, metadata, signature)
        if drift is not None:
            problems.append(drift)
    if problems:
        for f in files.values():
            f.close()
        raise ProblemsError(problems, f"cannot start: {len(problems)} problem(s), no call made")
    stats = {s: SettingStats(s, len(questions), len(ids & files[s].answered)) for s in files}
    return Plan(options, folder, todo, files, images, stats, metadata, api_key)


def backend_settings(plan: Plan) -> BackendSettings:
    """The backend settings for a plan (holds the API key)."""
    o = plan.options
    return BackendSettings(
        model=o.model,
        api_key=plan.api_key,
        base_url=o.base_url,
        system_prompt=o.system_prompt,
        temperature=o.sampling_temperature,
        max_tokens=o.max_tokens,
        timeout_s=o.timeout_s,
        max_retries=o.max_retries,
    )


async def _ask(backend: Backend, request: Request, reply_retries: int) -> Reply:
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
        return Reply(text, reply.input_tokens, reply.output_tokens)
    raise CallFailed(f"{reason} ({reply_retries + 1} attempts)")


Answer = tuple[Setting, str, Reply]


async def _write_answers(
    plan: Plan, inbox: asyncio.Queue[Answer | None], reporter: Reporter | None
) -> None:
    """Append answers as they arrive: what queued up during one write goes in the next batch.

    Each answer is one complete line; a batch ends with one ``fsync`` (on a writer thread, so
    calls keep flowing). Stops at ``None``, after writing everything queued before it.
    """
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gamut-writer") as pool:
        while True:
            batch = [await inbox.get()]
            while not inbox.empty():
                batch.append(inbox.get_nowait())
            answers = [a for a in batch if a is not None]
            for setting in plan.files:
                mine = [(qid, r.text) for s, qid, r in answers if s is setting]
                if not mine:
                    continue
                await loop.run_in_executor(pool, plan.files[setting].append_many, mine)
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


async def run(plan: Plan, backend: Backend, reporter: Reporter | None = None) -> GenerateResult:
    """Answer every question the plan still needs, ``options.concurrency`` calls at a time.

    Answers are appended to their files as they arrive (complete lines, fsync), by one writer
    that never holds up the calls. When ``options.deadline_s`` passes, calls in flight are
    cancelled and their questions listed as failures. A
    :class:`~scoring.generate.backends.FatalCallError` stops the run and is raised once the
    answers so far are on disk.
    """
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
    cfg: GamutConfig,
    options: GenerateOptions,
    reporter: Reporter | None = None,
    environ: Mapping[str, str] | None = None,
    today: dt.date | None = None,
) -> GenerateResult:
    """Check, record provenance, then answer every unanswered question (``gamut generate``).

    Provenance is written to ``submission.yaml`` before the first call, so a run that is killed
    still describes the answers it left.

    Raises:
        ProblemsError: when a check fails (nothing called, nothing written).
        FatalCallError: when the API refuses every call.
    """
    plan = prepare(cfg, options, environ)
    try:
        day = today or dt.date.today()
        o = options
        record = production_record(
            plan.signature, o.sampling_temperature, o.max_tokens, o.system_prompt, day
        )
        record_production(plan.folder / METADATA_FILE, plan.metadata, record, o.model, day)
        backend = make_backend(o.provider, backend_settings(plan))
        return asyncio.run(run(plan, backend, reporter))
    finally:
        plan.close()
