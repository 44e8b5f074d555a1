"""What a run of ``gamut generate`` is: its options, its checks, its progress and its result."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import TypeAdapter, ValidationError

from gamut.model_runner.images import resolve_images
from gamut.model_runner.provenance import drift_problem, read_metadata, run_signature
from gamut.model_runner.store import ResponseFile
from scoring.errors import GamutError, Problem, ProblemsError
from scoring.judge import providers
from scoring.judge.generation import BackendSettings, ImageRef
from scoring.layout import SubmissionFolder
from scoring.questions import Question, Setting, load_questions
from scoring.submissions.formats import SubmissionId

if TYPE_CHECKING:
    from gamut.project import Project


@dataclass(frozen=True)
class GenerateOptions:
    """Everything that decides what is run and how (``gamut generate``'s options)."""

    submission_id: str
    model: str
    provider: str = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    settings: tuple[Setting, ...] = (Setting.MULTIMODAL, Setting.TEXT_ONLY)
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int = 2048
    #: OpenAI-compatible providers: the body key of ``max_tokens`` (None:
    #: ``max_completion_tokens``, OpenAI's current name; ``max_tokens`` for a server that knows
    #: only the old one). Not part of the run's signature: the limit is the same either way.
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] | None = None
    concurrency: int = 8
    limit: int | None = None
    deadline_s: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    reply_retries: int = 2
    #: The name to show on the leaderboard, when a person gave one; else model_name stays TODO.
    model_name: str | None = None

    @property
    def sampling_temperature(self) -> float | None:
        """The temperature sent, or None for none."""
        if not providers.entry(self.provider).sampling:
            return None
        return 0.0 if self.temperature is None else self.temperature

    @property
    def signature(self) -> str:
        """What must match for answers to share a file (provider, model, decoding, prompt)."""
        return run_signature(
            self.provider,
            self.model,
            self.sampling_temperature,
            self.max_tokens,
            self.system_prompt,
        )

    @property
    def key_env(self) -> str:
        """The environment variable that holds the API key."""
        return self.api_key_env or providers.entry(self.provider).key_env


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
    lock: _FolderLock | None = None

    def close(self) -> None:
        """Close the response files and let other runs at the folder."""
        for f in self.files.values():
            f.close()
        if self.lock is not None:
            self.lock.release()


class _FolderLock:
    """An exclusive lock on a submission folder, so two runs never append to the same files."""

    def __init__(self, folder: Path) -> None:
        self.created = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise GamutError(
                f"another gamut generate is writing {folder}; wait for it to finish "
                "(or stop it), then rerun"
            ) from None

    def release(self, remove_if_created: bool = False) -> None:
        """Unlock; optionally remove the folder again if this run created it and left it empty."""
        if self._fd < 0:
            return
        os.close(self._fd)
        self._fd = -1
        if remove_if_created and self.created:
            with contextlib.suppress(OSError):
                self.folder.rmdir()


def _holds_answers(folder: Path, files: dict[Setting, ResponseFile]) -> bool:
    """Whether any response file of the folder, of any setting, already has a line."""
    for setting in Setting:
        f = files.get(setting)
        if f is not None and f.answered:
            return True
        path = SubmissionFolder(folder).responses(setting)
        if f is None and path.is_file() and path.stat().st_size > 0:
            return True
    return False


def _option_problems(options: GenerateOptions, has_key: bool) -> list[Problem]:
    """What is wrong with the options themselves: the id, options the provider does not take,
    the API key's variable."""
    try:
        TypeAdapter(SubmissionId).validate_python(options.submission_id)
        bad_id = False
    except ValidationError:
        bad_id = True
    entry, provider, env = providers.entry(options.provider), options.provider, options.key_env
    drop = f"for --provider {provider}"
    found = [
        (
            bad_id,
            "--submission",
            f"invalid id {options.submission_id!r}",
            "use 3 to 64 lowercase letters, digits, '-', '_' or '.'",
        ),
        (
            not entry.sampling and options.temperature is not None,
            "--temperature",
            f"the {provider} API takes no sampling parameters",
            f"drop --temperature {drop}",
        ),
        (
            not entry.chat_completions and options.max_tokens_param is not None,
            "--max-tokens-param",
            f"applies to OpenAI-compatible providers, not {provider} (its API names it max_tokens)",
            f"drop --max-tokens-param {drop}",
        ),
        (
            not has_key,
            env,
            "environment variable not set",
            f"export {env}=... (any value for a local server without keys), or name another with "
            "--api-key-env",
        ),
    ]
    return [Problem(where, None, message, fix) for bad, where, message, fix in found if bad]


def prepare(
    project: Project, options: GenerateOptions, environ: Mapping[str, str] | None = None
) -> Plan:
    """Check everything a run needs before any model call."""
    env = os.environ if environ is None else environ
    api_key = env.get(options.key_env, "")
    problems = _option_problems(options, bool(api_key))
    questions_file = project.questions_path
    try:
        all_questions = load_questions(questions_file)
    except ProblemsError as exc:
        raise ProblemsError(problems + exc.problems, exc.summary) from None
    questions = all_questions[: options.limit] if options.limit else all_questions
    ids = {q.question_id for q in questions}
    all_ids = {q.question_id for q in all_questions}
    sub = project.submissions.folder(options.submission_id)
    folder = sub.path
    lock = _FolderLock(folder) if not problems else None
    files: dict[Setting, ResponseFile] = {}
    for setting in dict.fromkeys(options.settings):
        f, file_problems = ResponseFile.open(sub.responses(setting), all_ids)
        problems.extend(file_problems)
        if f is not None:
            files[setting] = f
    todo = {s: [q for q in questions if q.question_id not in f.answered] for s, f in files.items()}
    images: dict[str, ImageRef] = {}
    if Setting.MULTIMODAL in todo:
        images, image_problems = resolve_images(todo[Setting.MULTIMODAL], questions_file)
        problems.extend(image_problems)
    metadata, meta_problems = read_metadata(sub.metadata)
    problems.extend(meta_problems)
    if _holds_answers(folder, files):
        drift = drift_problem(sub.metadata, metadata, options.signature)
        if drift is not None:
            problems.append(drift)
    if problems:
        for f in files.values():
            f.close()
        if lock is not None:
            lock.release(remove_if_created=True)
        raise ProblemsError(problems, f"cannot start: {len(problems)} problem(s), no call made")
    stats = {s: SettingStats(s, len(questions), len(ids & files[s].answered)) for s in files}
    return Plan(options, folder, todo, files, images, stats, metadata, api_key, lock)


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
        token_limit_key=o.max_tokens_param or "max_completion_tokens",
        timeout_s=o.timeout_s,
        max_retries=o.max_retries,
    )
