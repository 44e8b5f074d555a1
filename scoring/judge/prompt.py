"""The judge prompt (docs/contract.md §5): a versioned template, rendered per (response, check).

Shared content comes first and the one check last, so provider prefix caching applies across the
checks of one response.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoring import fastjson
from scoring.compiler import CheckKind
from scoring.errors import BadReply, GamutError, validation_messages
from scoring.judge import providers
from scoring.judge.spec import JudgeConfig
from scoring.verdicts import Verdict

_SECTIONS = ("version", "system", "shared", "check", "reask")
_KIND_LABEL = {CheckKind.BASELINE: "threshold", CheckKind.COVERAGE: "threshold"}


class JudgeReply(BaseModel):
    """The judge's reply: one verdict and a short rationale."""

    model_config = ConfigDict(extra="forbid")

    verdict: Verdict
    rationale: str = Field(min_length=1, max_length=4000)


#: JSON Schema sent to providers that support structured output.
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": [v.value for v in Verdict]},
        "rationale": {"type": "string"},
    },
    "required": ["verdict", "rationale"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class PromptTemplate:
    """A parsed judge prompt template."""

    version: str
    digest: str
    system: str
    shared: str
    check: str
    reask: str

    def render_shared(self, question: str, response: str) -> str:
        """The per-response part of the user message: question, then the fenced response."""
        fence = response_fence(response)
        return _fill(self.shared, question=question, response=response, fence=fence)

    def render_check(self, check_text: str, kind: CheckKind) -> str:
        """The per-check tail of the user message."""
        return _fill(self.check, check=check_text, kind=_KIND_LABEL.get(kind, kind.value))

    def render_reask(self, error: str) -> str:
        """The follow-up message sent after an unusable reply."""
        return _fill(self.reask, error=error)


def _fill(template: str, **values: str) -> str:
    # one pass, so a placeholder-like string inside a value is never expanded
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m[1], m[0]), template)


def response_fence(response: str) -> str:
    """A fence token derived from the response that does not occur inside it (deterministic)."""
    salt = 0
    while True:
        h = hashlib.sha256(f"{salt}:{response}".encode()).hexdigest()[:12]
        fence = f"<<<ANSWER-{h}>>>"
        if fence not in response:
            return fence
        salt += 1


def template_sections(text: str, name: str, expected: Sequence[str]) -> dict[str, str]:
    """The sections of a prompt template's text: each ``@@ section`` line starts one (``#`` comment
    lines may come before the first), without leading and trailing blank lines."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("@@ "):
            current = line[3:].strip()
            if current not in expected:
                raise GamutError(
                    f"{name}: unknown section {current!r} (expected {', '.join(expected)})"
                )
            sections[current] = []
        elif current is None:
            if line.strip() and not line.startswith("#"):
                raise GamutError(f"{name}: text before the first '@@ section' line")
        else:
            sections[current].append(line)
    missing = [s for s in expected if s not in sections]
    if missing:
        raise GamutError(f"{name}: missing section(s) {', '.join(missing)}")
    return {k: "\n".join(v).strip("\n") for k, v in sections.items()}


def parse_template(text: str, name: str = "template") -> PromptTemplate:
    """Parse a template file's text (``@@ section`` markers, ``#`` comment lines)."""
    body = template_sections(text, name, _SECTIONS)
    version = body.pop("version").strip()
    return PromptTemplate(version, hashlib.sha256(text.encode()).hexdigest()[:16], **body)


@functools.cache
def load_template(prompt_version: str) -> PromptTemplate:
    """Load ``scoring/prompts/judge_<prompt_version>.txt``."""
    name = f"judge_{prompt_version}.txt"
    try:
        text = resources.files("scoring").joinpath("prompts", name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        raise GamutError(
            f"no judge prompt template {name!r} (set prompt_version to one of "
            f"{', '.join(available_versions()) or 'none'})"
        ) from None
    return parse_template(text, name)


def available_versions() -> list[str]:
    """Prompt versions shipped in ``scoring/prompts/``."""
    files = resources.files("scoring").joinpath("prompts").iterdir()
    return sorted(f.name[6:-4] for f in files if re.fullmatch(r"judge_.+\.txt", f.name))


_FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_reply(text: str) -> JudgeReply:
    """Validate a raw reply: one JSON object with a known verdict (a Markdown code fence around it
    is tolerated). Never guesses."""
    m = _FENCED.match(text)
    body = m[1] if m else text.strip()
    obj = fastjson.loads(body)
    if obj is fastjson.MISS:
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            raise BadReply("it is not a JSON object") from None
    if not isinstance(obj, dict):
        raise BadReply("it is not a JSON object")
    try:
        return JudgeReply.model_validate(obj)
    except ValidationError as exc:  # said in the format's words: the reply may quote a check
        raise BadReply(validation_messages(exc, "reply", quote_keys=False)[0]) from None


def judge_provenance(judge: JudgeConfig) -> dict[str, Any]:
    """A judge's identity for the record: provider, model, family, request settings and template."""
    out: dict[str, Any] = {
        "provider": judge.provider,
        "model": judge.model,
        "prompt_version": judge.prompt_version,
        "family": judge.family,
        # the request settings (the site's "How this was judged" page shows them)
        "max_tokens": judge.max_tokens,
        "mode": judge.mode,
    }
    if providers.entry(judge.provider).sampling:
        out["temperature"] = judge.temperature
    if judge.seed is not None:
        out["seed"] = judge.seed
    if judge.unrecorded != "fail":
        out["unrecorded"] = judge.unrecorded  # what answers a request no replay file holds
    try:
        template = load_template(judge.prompt_version)
    except GamutError:
        return out  # the verdicts exist; an unknown template is the judge step's error to report
    out["prompt_template"] = template.version
    out["prompt_digest"] = template.digest
    return out
