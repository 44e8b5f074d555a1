"""The workbench's LLM steps call :func:`ask`: a versioned template of ``workbench/prompts/``,
a request key and a pydantic reply model (the structured output), validated with one repair
(``fix_v1``). The answering :class:`LLM` is :class:`ProviderLLM` (a judge's model),
:class:`workbench.batch.BatchLLM` (its batch API) or :class:`ReplayLLM` (recorded replies).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from pydantic import BaseModel, ValidationError

from scoring.errors import GamutError, ProblemsError, validation_messages
from scoring.jsonl import read_jsonl, validated
from scoring.judge.prompt import template_sections

if TYPE_CHECKING:
    from scoring.judge.generation import Generator, Request
    from scoring.judge.spec import JudgeConfig

T = TypeVar("T", bound=BaseModel)
_SECTIONS = ("version", "system", "user")
#: The template of the one repair :func:`ask` asks for when a reply does not fit its schema.
FIX_TEMPLATE = "fix_v1"


class LLMError(GamutError):
    """An LLM step got no usable reply; the message names the template and the request key."""


class Deferred(LLMError):
    """Batch mode: the request waits for its batch; the step skips its item (run it again)."""


@dataclass(frozen=True)
class Template:
    """A parsed workbench prompt template."""

    name: str
    system: str
    user: str

    def render(self, variables: Mapping[str, str]) -> str:
        """The user message with ``{{name}}`` placeholders filled (one pass, never recursive)."""
        missing = sorted(set(re.findall(r"\{\{(\w+)\}\}", self.user)) - set(variables))
        if missing:
            raise LLMError(f"template {self.name}: no value for {', '.join(missing)}")
        return re.sub(r"\{\{(\w+)\}\}", lambda m: variables[m[1]], self.user)


@functools.cache
def load_template(name: str) -> Template:
    """Load ``workbench/prompts/<name>.txt`` (``propose_v1``); LLMError if absent or incomplete."""
    try:
        text = (
            resources.files("workbench")
            .joinpath("prompts", f"{name}.txt")
            .read_text(encoding="utf-8")
        )
    except (FileNotFoundError, OSError):
        raise LLMError(f"no workbench prompt template {name!r} in workbench/prompts/") from None
    try:
        body = template_sections(text, name, _SECTIONS)
    except GamutError as exc:
        raise LLMError(str(exc)) from None
    return Template(name=name, system=body["system"], user=body["user"])


@dataclass(frozen=True)
class LLMRequest:
    """One structured-output request: what a provider backend sends."""

    template: str
    key: str
    system: str
    user: str
    schema: dict[str, Any]
    image: Path | None = None


class LLM(Protocol):
    """A model that answers a request with one JSON object (the structured output)."""

    def complete(self, request: LLMRequest) -> Any:
        """The parsed JSON reply to ``request``."""


@functools.cache
def reply_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a reply model (made once per model: pydantic takes milliseconds)."""
    return model.model_json_schema()


def ask(
    llm: LLM,
    template: str,
    key: str,
    variables: Mapping[str, str],
    reply: type[T],
    image: Path | None = None,
    schema: dict[str, Any] | None = None,
) -> T:
    """Render ``template``, ask ``llm`` (for ``schema``, default ``reply``'s) and validate the
    reply as ``reply``; LLMError when it and its repair do not fit (never a default value)."""
    tpl = load_template(template)
    request = LLMRequest(
        template=template,
        key=key,
        system=tpl.system,
        user=tpl.render(variables),
        schema=reply_schema(reply) if schema is None else schema,
        image=image,
    )
    raw = llm.complete(request)
    for attempt in (0, 1):
        try:
            return reply.model_validate(raw)
        except ValidationError as exc:  # never quoting the reply: it is held material
            problems = validation_messages(exc, "reply", quote_keys=False)
        if attempt == 1:
            break
        raw = llm.complete(repair_request(request, raw, problems))
    raise LLMError(
        f"{template} reply for {key} (and its repair): {problems[0]} (the model's reply does not "
        "fit the schema; run the step again or record a valid reply)"
    )


def repair_request(request: LLMRequest, raw: Any, problems: list[str]) -> LLMRequest:
    """The one repair of a refused reply: the request, its reply and the problems fed back."""
    fix = load_template(FIX_TEMPLATE)
    return LLMRequest(
        template=FIX_TEMPLATE,
        key=f"{request.template}:{request.key}",
        system=f"{request.system}\n\n{fix.system}",
        user=fix.render(
            {
                "request": request.user,
                "reply": json.dumps(raw, ensure_ascii=False),
                "problems": "\n".join(f"- {p}" for p in problems[:20]),
            }
        ),
        schema=request.schema,
        image=request.image,
    )


class _Recorded(BaseModel):
    template: str
    key: str
    reply: Any


class ReplayLLM:
    """Answers from a JSON Lines file of recorded replies: ``{"template", "key", "reply"}``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fix = 'each line: {"template": ..., "key": ..., "reply": {...}}'
        data = read_jsonl(path, str(path), fix)
        problems = list(data.problems)
        parse = _Recorded.model_validate
        self.replies: dict[tuple[str, str], Any] = {
            (r.template, r.key): r.reply
            for _, r in validated(data.lines, parse, str(path), fix, problems)
        }
        if problems:
            raise ProblemsError(problems, f"invalid replay file {path}")

    def complete(self, request: LLMRequest) -> Any:
        """The recorded reply to (template, key)."""
        try:
            return self.replies[(request.template, request.key)]
        except KeyError:
            raise LLMError(
                f"{self.path}: no recorded {request.template} reply for {request.key} "
                "(record one, or use a live provider)"
            ) from None


#: What :class:`ProviderLLM` adds to each prompt: the structured output asked for.
SCHEMA_INSTRUCTION = (
    "Reply with one JSON object and nothing else (no prose, no code fence), valid against this "
    "JSON Schema:\n"
)


class ProviderLLM:
    """A configured judge's model through its provider's generation class (``gamut
    generate``'s), one client per system prompt in one event loop (connections kept); a context
    manager. ``max_tokens``: the step's output limit (default: the judge's); usage counted under
    ``step``. LLMError when the key variable is unset (named, never the key)."""

    def __init__(
        self,
        judge: JudgeConfig,
        name: str,
        max_tokens: int | None = None,
        step: str = "",
    ) -> None:
        from scoring.judge import providers
        from scoring.judge.spec import judge_key_problems
        from workbench.usage import Usage

        problems = judge_key_problems({name: judge}, str(name))
        if problems:
            raise LLMError(f"{problems[0].message}: {problems[0].fix}, or give --replay FILE")
        # a local server (a base_url) needs no key, as in the judge's own calls
        key = os.environ.get(judge.api_key_env or "") or "not-needed"
        self.name = name
        self.judge = judge
        self.max_tokens = judge.max_tokens if max_tokens is None else max_tokens
        self.step = step
        #: step -> requests answered and their tokens (the provider's usage)
        self.usage: defaultdict[str, Usage] = defaultdict(Usage)
        self._api_key = key
        self._cls = providers.generator_class(judge.provider)
        self._generators: dict[str, Generator] = {}
        self._runner = asyncio.Runner()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _generator(self, system: str) -> Generator:
        gen = self._generators.get(system)
        if gen is None:
            from scoring.judge.generation import BackendSettings

            j = self.judge
            settings = BackendSettings(
                model=j.model,
                api_key=self._api_key,
                base_url=j.base_url,
                system_prompt=system or None,
                temperature=j.temperature,
                max_tokens=self.max_tokens,
                token_limit_key=j.token_limit_key,
                timeout_s=j.timeout_s,
                max_retries=j.max_retries,
            )
            gen = self._generators[system] = self._cls(settings)
        return gen

    def call(self, request: LLMRequest) -> Request:
        """The prompt and image, the schema as native structured output or at the prompt's end."""
        from gamut.model_runner.images import open_image
        from scoring.judge.generation import ImageRef, OutputSchema, Request

        image = None
        if request.image is not None:  # its media type read from its bytes (LLMError if none)
            media_type, reason = open_image(request.image)
            if media_type is None:
                raise LLMError(f"{request.image}: {reason}")
            image = ImageRef(path=request.image, media_type=media_type)
        if self.judge.structured_output:
            return Request(request.user, image, OutputSchema(request.template, request.schema))
        prompt = f"{request.user}\n\n{SCHEMA_INSTRUCTION}{json.dumps(request.schema)}"
        return Request(prompt, image)

    def complete(self, request: LLMRequest) -> Any:
        """Ask the judge's model; the reply parsed as JSON. LLMError when the call fails after
        the SDK's retries or the reply is not JSON (never quoting the provider's text, which may
        quote the prompt back)."""
        from scoring.errors import CallFailed

        gen = self._generator(request.system)
        call = self.call(request)
        try:
            reply = self._runner.run(gen.answer(call))
        except CallFailed as exc:
            # The reason's parenthesised tail is the provider's own message: not printed.
            reason = str(exc).partition(" (")[0]
            raise LLMError(
                f"{request.template} request for {request.key}: the judge {self.name} call "
                f"failed ({reason}); run the step again (it resumes)"
            ) from None
        self.usage[self.step].add(reply.input_tokens, 0, reply.output_tokens)
        return json_reply(request, reply.text)

    def close(self) -> None:
        """Close the provider clients and the event loop."""
        try:
            for gen in self._generators.values():
                self._runner.run(gen.aclose())
        finally:
            self._generators.clear()
            self._runner.close()


def json_reply(request: LLMRequest, text: str) -> Any:
    """A reply's text parsed as JSON, a Markdown fence allowed (models add one despite being
    told); LLMError names the template and key, never the text."""
    m = re.fullmatch(r"\s*```(?:json)?\s*\n(.*)\n\s*```\s*", text, re.DOTALL)
    try:
        return json.loads(m[1] if m else text)
    except ValueError:
        raise LLMError(
            f"{request.template} reply for {request.key}: not JSON (the model's reply; "
            "run the step again)"
        ) from None
