"""The one adapter between the workbench's LLM steps and a model provider.

Every LLM step (propose, guard, draft, repair, refine) calls :func:`ask` with a versioned prompt
template from ``gamut/workbench/prompts/`` (``<name>_<version>.txt``), the template's variables, a
request key (what the request is about: an image, a question) and a pydantic model whose JSON
Schema is the structured output asked for. :func:`ask` renders the prompt, hands one
:class:`LLMRequest` to an :class:`LLM` and validates the reply. Wiring the steps to the judge's
provider backends (direct and batch mode, keys, prices) is a new :class:`LLM` implementation in
this module; no step changes. :class:`ReplayLLM` answers from recorded replies (offline work, the
demo, the tests); :class:`CountingLLM` counts what a run would send.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from scoring.errors import GamutError, Problem, ProblemsError
from scoring.submissions import read_jsonl

T = TypeVar("T", bound=BaseModel)
_SECTIONS = ("version", "system", "user")


class LLMError(GamutError):
    """An LLM step got no usable reply; the message names the template and the request key."""


@dataclass(frozen=True)
class Template:
    """A parsed workbench prompt template."""

    name: str
    version: str
    digest: str
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
    """Load ``gamut/workbench/prompts/<name>.txt`` (``name`` includes the version: ``propose_v1``).

    Raises:
        LLMError: no such template, or a section is missing.
    """
    try:
        text = (
            resources.files("gamut.workbench")
            .joinpath("prompts", f"{name}.txt")
            .read_text(encoding="utf-8")
        )
    except (FileNotFoundError, OSError):
        raise LLMError(
            f"no workbench prompt template {name!r} in gamut/workbench/prompts/"
        ) from None
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("@@ "):
            current = line[3:].strip()
            if current not in _SECTIONS:
                raise LLMError(f"{name}: unknown section {current!r}")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    missing = [s for s in _SECTIONS if s not in sections]
    if missing:
        raise LLMError(f"{name}: missing section(s) {', '.join(missing)}")
    body = {k: "\n".join(v).strip("\n") for k, v in sections.items()}
    return Template(
        name=name,
        version=body["version"].strip(),
        digest=hashlib.sha256(text.encode()).hexdigest()[:16],
        system=body["system"],
        user=body["user"],
    )


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
    """Render ``template``, send it through ``llm`` and validate the reply as ``reply``.

    ``schema`` replaces ``reply``'s JSON Schema as the structured output asked for (when the
    reply is checked by rules beyond a model, as a meta-rubric is, to feed problems back).

    Raises:
        LLMError: the reply does not fit ``reply``'s schema (never a default value).
    """
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
    try:
        return reply.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise LLMError(
            f"{template} reply for {key}: {where}: {first['msg']} (the model's reply does not "
            "fit the schema; run the step again or record a valid reply)"
        ) from None


class ReplayLLM:
    """Answers from a JSON Lines file of recorded replies: ``{"template", "key", "reply"}``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data = read_jsonl(
            path, str(path), 'each line: {"template": ..., "key": ..., "reply": {...}}'
        )
        problems = list(data.problems)
        self.replies: dict[tuple[str, str], Any] = {}
        for ln in data.lines:
            v = ln.value
            if not (isinstance(v, dict) and {"template", "key", "reply"} <= set(v)):
                problems.append(
                    Problem(str(path), ln.line, "not a recorded reply", "give template, key, reply")
                )
                continue
            self.replies[(str(v["template"]), str(v["key"]))] = v["reply"]
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


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: four characters a token, as the judge's dry run."""
    return max(1, (len(text) + 3) // 4)


@dataclass
class CountingLLM:
    """Counts requests and estimated tokens per template, replying with ``answer(request)``."""

    answer: Callable[[LLMRequest], Any]
    image_tokens: int = 1000
    requests: Counter[str] = field(default_factory=Counter)
    input_tokens: Counter[str] = field(default_factory=Counter)
    output_tokens: Counter[str] = field(default_factory=Counter)
    _schema_tokens: dict[int, int] = field(default_factory=dict, repr=False)

    def complete(self, request: LLMRequest) -> Any:
        """Count ``request`` and its reply, then return the reply."""
        out = self.answer(request)
        t = request.template
        self.requests[t] += 1
        schema = self._schema_tokens.get(id(request.schema))
        if schema is None:
            schema = self._schema_tokens[id(request.schema)] = estimate_tokens(
                json.dumps(request.schema)
            )
        self.input_tokens[t] += estimate_tokens(request.system + request.user) + schema
        if request.image is not None:
            self.input_tokens[t] += self.image_tokens
        self.output_tokens[t] += estimate_tokens(json.dumps(out))
        return out


__all__ = [
    "LLM",
    "CountingLLM",
    "LLMError",
    "LLMRequest",
    "ReplayLLM",
    "Template",
    "ask",
    "estimate_tokens",
    "load_template",
    "reply_schema",
]
