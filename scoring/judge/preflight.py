"""The preflight: before a run spends anything, one request per judge on a fixed public check and
answer shows that the judge returns a usable verdict. The check is public, so the server's error
text may be shown even when rubrics are held."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.compiler import CheckKind
from scoring.errors import BackendError, BadReply, ErrorKind
from scoring.judge import providers
from scoring.judge.backends import JudgeRequest, Turn
from scoring.judge.judges import BuiltJudge
from scoring.judge.prompt import PromptTemplate, parse_reply
from scoring.questions import Setting

#: Requests one judge's preflight makes at most (re-asks and transient errors included).
MAX_REQUESTS = 3
#: The fixed public check and answer the preflight asks about.
QUESTION = "What is shown in the picture, and what colour is the car?"
RESPONSE = "The picture shows a red car parked in front of a white house."
CHECK = "States that the car is red."
EXPECTED = "meets"
#: Seconds to wait before asking again after a transient error (times the attempt number).
RETRY_WAIT_S = 1.0
#: Longest server text quoted in a message.
MAX_QUOTE = 600


@dataclass(frozen=True)
class Preflight:
    """One judge's preflight."""

    judge: str
    requests: int
    verdict: str | None = None
    error: str = ""
    meaning: str = ""

    @property
    def ok(self) -> bool:
        """True when the judge returned a usable verdict."""
        return self.verdict is not None

    def __str__(self) -> str:
        n = f"{self.requests} request(s)"
        if self.ok:
            agree = "" if self.verdict == EXPECTED else f" (expected {EXPECTED})"
            return f"{self.judge}: usable verdict {self.verdict!r}{agree} after {n}"
        said = self.error[:MAX_QUOTE]
        return f"{self.judge}: no usable verdict after {n}: {said}; {self.meaning}"


def request(template: PromptTemplate) -> JudgeRequest:
    """The preflight's request, rendered with the judge's own template."""
    return JudgeRequest(
        "preflight",
        Setting.TEXT_ONLY,
        "preflight",
        "preflight",
        CheckKind.FACT,
        QUESTION,
        RESPONSE,
        CHECK,
        template.system,
        template.render_shared(QUESTION, RESPONSE),
        template.render_check(CHECK, CheckKind.FACT),
    )


#: (what the server's text matches, what it means and which key to change), first match wins.
_MEANINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), m)
    for p, m in (
        (
            r"max_completion_tokens|max_tokens",
            "the server refuses the output-token limit's name: set judges.{name}.max_tokens_param "
            '("max_tokens" or "max_completion_tokens")',
        ),
        (
            r"response_format|json_schema|json_object|literal_error|grammar|deserialize",
            "the server does not accept this structured-output shape: set judges.{name}.dialect "
            '("llama-cpp-python" for llama-cpp-python\'s server, "tgi" for Text Generation '
            'Inference, "openai" for OpenAI, vLLM, SGLang, llama-server, Ollama, LM Studio), '
            "or structured_output = false",
        ),
        (
            r"\b40[13]\b|api key|unauthori[sz]ed|authentication|permission",
            "the server refuses the key: check judges.{name}.api_key_env and the key it names",
        ),
        (
            r"\b404\b|model.*(not found|does not exist)|no such model|unknown model",
            "the server does not know this model or endpoint: check judges.{name}.model and "
            "judges.{name}.base_url",
        ),
        (
            r"APIConnectionError|APITimeoutError|connect|timed? ?out",
            "the server cannot be reached in time: check judges.{name}.base_url (is the server "
            "running?) and judges.{name}.timeout_s",
        ),
    )
)
_UNUSABLE = (
    "the server answers, but not with a verdict object: set judges.{name}.dialect to the "
    "server's structured-output shape (and structured_output = true) so it constrains the "
    "reply, or choose another judges.{name}.model"
)
_OTHER = (
    "the request failed: check judges.{name}.base_url, judges.{name}.model and "
    "judges.{name}.dialect against the server's documentation"
)


def meaning(name: str, text: str) -> str:
    """What a failed preflight's server text means, naming the config key to change."""
    for pattern, said in _MEANINGS:
        if pattern.search(text):
            return said.format(name=name)
    return _OTHER.format(name=name)


async def check_judge(j: BuiltJudge) -> Preflight:
    """One judge's preflight: at most :data:`MAX_REQUESTS` requests, the SDK's retries off."""
    jc = j.config
    key = os.environ.get(jc.api_key_env) if jc.api_key_env else None
    backend = providers.backend_class(jc.provider)(
        j.name, jc.model_copy(update={"max_retries": 0}), key, j.backend.root
    )
    req = request(j.template)
    turns: tuple[Turn, ...] = ()
    error, unusable = "", False
    try:
        for n in range(1, MAX_REQUESTS + 1):
            try:
                comp = await backend.complete(req, turns)
            except BackendError as exc:
                error, unusable = str(exc) + (f" [{exc.raw[:200]}]" if exc.raw else ""), False
                if exc.kind in (ErrorKind.REJECTED, ErrorKind.TOO_LARGE):
                    return Preflight(j.name, n, error=error, meaning=meaning(j.name, error))
                if exc.kind is ErrorKind.API_ERROR and n < MAX_REQUESTS:
                    await asyncio.sleep(RETRY_WAIT_S * n)
                continue
            try:
                return Preflight(j.name, n, parse_reply(comp.text).verdict.value)
            except BadReply as exc:
                error, unusable = f"unusable reply {comp.text[:300]!r} ({exc})", True
                turns = (*turns, Turn(comp.text, j.template.render_reask(str(exc))))
    finally:
        await backend.aclose()
    said = _UNUSABLE.format(name=j.name) if unusable else meaning(j.name, error)
    return Preflight(j.name, MAX_REQUESTS, error=error, meaning=said)


def preflight(judges: Sequence[BuiltJudge]) -> dict[str, Preflight]:
    """The preflight of every judge that calls out and has ``preflight`` on, all at once."""
    todo = [j for j in judges if j.backend.calls_out and j.config.preflight]

    async def run() -> list[Preflight]:
        return list(await asyncio.gather(*(check_judge(j) for j in todo)))

    return {p.judge: p for p in asyncio.run(run())} if todo else {}
