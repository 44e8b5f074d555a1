"""A judge's definition as data: the ``[judges.NAME]`` tables of a project config."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scoring.errors import Problem

#: Dialects whose servers read the output-token limit as ``max_tokens`` only (llama-cpp-python
#: 0.3.36's request model has no other; TGI 3.3 reads max_completion_tokens as an alias, its
#: earlier releases do not).
_MAX_TOKENS_ONLY = ("llama-cpp-python", "tgi")


class JudgeConfig(BaseModel):
    """One LLM judge. Its identity is provider + model + prompt version + decoding settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Annotated[
        str, Field(description="A registered backend name (scoring.judge.providers.PROVIDERS).")
    ]
    model: Annotated[str, Field(min_length=1)]
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    family: Annotated[str, Field(min_length=1)]
    max_concurrency: Annotated[int, Field(ge=1, le=1024)] = 16
    primary: bool = False
    temperature: float = Field(
        default=0.0,
        description="OpenAI-compatible providers: the sampling temperature sent with every "
        "request. Refused for 'anthropic' (its Messages API takes no sampling parameters).",
    )
    seed: int | None = Field(
        default=None,
        description="OpenAI-compatible providers: the sampling seed sent with every request "
        "(part of the judge's identity when set). Refused for 'anthropic', which has none.",
    )
    requests_per_minute: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Direct mode: the provider's request limit; requests are paced under it.",
    )
    tokens_per_minute: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Direct mode: the provider's token limit; requests are paced under it, "
        "each counted as its prompt characters / 4 plus max_tokens, as providers count it.",
    )
    max_tokens: Annotated[int, Field(ge=16)] = 400
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] | None = Field(
        default=None,
        description="OpenAI-compatible providers: the request key that carries max_tokens. "
        "Default max_completion_tokens (OpenAI's current name; its reasoning models refuse "
        "max_tokens, which openai-python marks deprecated); vLLM reads both; 'max_tokens' for a "
        "server that knows only the old name. Not part of the judge's identity: the limit is "
        "the same under either name.",
    )
    dialect: Literal["openai", "llama-cpp-python", "tgi"] | None = Field(
        default=None,
        description="OpenAI-compatible providers: the server's request shape for structured "
        "output. 'openai' (the default): response_format json_schema (OpenAI, vLLM, SGLang, "
        "llama.cpp's llama-server, Ollama, LM Studio); 'llama-cpp-python': json_object with "
        "a schema, and max_tokens (its server reads no other limit); 'tgi': Text Generation "
        "Inference's json grammar, and max_tokens. Not part of the judge's identity: the "
        "same schema constrains the reply in every shape.",
    )
    preflight: bool = Field(
        default=True,
        description="Before a run calls this judge, one request on a fixed public check shows "
        "that it returns a usable verdict; when not, the judge is stopped with the server's "
        "error, after at most 3 requests.",
    )
    timeout_s: Annotated[float, Field(gt=0)] = 120.0
    prompt_version: str = "v1"
    replay: Path | None = Field(
        default=None, description="For provider 'replay': the stored verdict file to replay."
    )
    unrecorded: Literal["fail", "offline-match"] = Field(
        default="fail",
        description="For provider 'replay': what a request the file holds no verdict for gets: "
        "'fail' (a failure naming the file) or 'offline-match' (the demo's deterministic word "
        "matcher, scoring/judge/offline_match.py, so a new submission can be judged offline).",
    )
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    price_cached_in_per_mtok: float | None = Field(
        default=None, description="Price of cached input tokens; defaults to price_in_per_mtok."
    )
    max_retries: Annotated[int, Field(ge=0, le=20)] = Field(
        default=4,
        description="SDK retries (with backoff, honouring Retry-After) for 429/5xx/"
        "timeouts/dropped connections.",
    )
    structured_output: bool = Field(
        default=True,
        description="Ask the provider for JSON-schema output (the reply is validated either way).",
    )
    deadline_s: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="Per-run deadline for this judge, in seconds."
    )

    mode: Literal["direct", "batch"] = Field(
        default="direct",
        description="'direct': one call per check, max_concurrency at a time; 'batch': the "
        "provider's batch API (gamut judge submits, collects, and exits 75 while batches are "
        "in flight). Not part of the judge's identity: a verdict does not depend on the mode.",
    )
    batch_max_requests: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Batch mode: at most this many requests per batch (smaller batches finish "
        "sooner); the provider's own limit applies either way.",
    )
    batch_price_in_per_mtok: float | None = Field(
        default=None, description="Batch-mode price of input tokens (USD per million)."
    )
    batch_price_out_per_mtok: float | None = Field(
        default=None, description="Batch-mode price of output tokens (USD per million)."
    )
    batch_price_cached_in_per_mtok: float | None = Field(
        default=None,
        description="Batch-mode price of cached input tokens; defaults to batch_price_in_per_mtok.",
    )

    @field_validator("provider")
    @classmethod
    def _registered(cls, value: str) -> str:
        from scoring.judge import providers

        if value not in providers.PROVIDERS and value not in providers.names():
            raise ValueError(f"unknown provider {value!r}; one of: {', '.join(providers.names())}")
        return value

    @model_validator(mode="after")
    def _what_the_provider_takes(self) -> JudgeConfig:
        from scoring.judge import providers

        entry, p = providers.entry(self.provider), self.provider
        if entry.replays and self.replay is None:
            raise ValueError(f'provider {p!r} needs replay = "PATH" (the stored verdicts)')
        if not entry.replays and self.replay is not None:
            raise ValueError(f"'replay' applies only to provider 'replay', not {p!r}")
        if not entry.replays and self.unrecorded != "fail":
            raise ValueError(
                f"'unrecorded' applies only to provider 'replay', not {p!r}: remove it"
            )
        if self.mode == "batch" and entry.replays:
            raise ValueError(f"provider {p!r} never calls out; it has no batch mode")
        unheard = [k for k in ("temperature", "seed") if k in self.model_fields_set]
        if not entry.sampling and unheard:
            raise ValueError(
                f"{' and '.join(unheard)}: the {p} API takes no sampling parameters, so the "
                "judge cannot send it: remove it"
            )
        for key in ("max_tokens_param", "dialect"):
            if getattr(self, key) is not None and not entry.chat_completions:
                raise ValueError(
                    f"'{key}' applies to OpenAI-compatible providers, not {p!r}: remove it"
                )
        if self.dialect == "llama-cpp-python" and self.max_tokens_param == "max_completion_tokens":
            raise ValueError(
                "dialect 'llama-cpp-python': its server reads max_tokens only (it ignores "
                "max_completion_tokens, so the reply would not be limited): remove "
                "max_tokens_param"
            )
        return self

    @property
    def request_dialect(self) -> str:
        """The request shape the judge's server accepts (``dialect``, default ``openai``)."""
        return self.dialect or "openai"

    @property
    def token_limit_key(self) -> str:
        """The chat completions body key of the output-token limit: ``max_tokens_param``, or
        ``max_tokens`` for a dialect that reads only that, else ``max_completion_tokens``."""
        if self.max_tokens_param:
            return self.max_tokens_param
        return "max_tokens" if self.dialect in _MAX_TOKENS_ONLY else "max_completion_tokens"

    def prices(self, mode: str) -> tuple[float, float, float] | None:
        """(input, cached input, output) USD per million tokens in ``mode``, or None when the
        config does not give them."""
        if mode == "batch":
            tin, tout = self.batch_price_in_per_mtok, self.batch_price_out_per_mtok
            cached = self.batch_price_cached_in_per_mtok
        else:
            tin, tout = self.price_in_per_mtok, self.price_out_per_mtok
            cached = self.price_cached_in_per_mtok
        if tin is None or tout is None:
            return None
        return tin, (cached if cached is not None else tin), tout

    def cost(self, mode: str, tokens_in: int, tokens_cached: int, tokens_out: int) -> float | None:
        """USD for these tokens at the configured prices of ``mode`` (None: no prices)."""
        prices = self.prices(mode)
        if prices is None:
            return None
        p_in, p_cached, p_out = prices
        uncached = tokens_in - tokens_cached
        return (uncached * p_in + tokens_cached * p_cached + tokens_out * p_out) / 1e6


def judge_key_problems(
    judges: Mapping[str, Mapping[str, Any] | JudgeConfig],
    file: str,
    names: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Problems with the API keys of the named judges (all judges when ``names`` is None)."""
    from scoring.judge import providers

    env = os.environ if environ is None else environ
    out: list[Problem] = []
    wanted = set(judges) if names is None else set(names)
    for name, j in judges.items():
        d = j.model_dump() if isinstance(j, JudgeConfig) else j
        if (
            name not in wanted
            or not isinstance(d, Mapping)
            or not providers.needs_key(str(d.get("provider")))
        ):
            continue
        var, key = d.get("api_key_env"), f"judges.{name}.api_key_env"
        if not var and not d.get("base_url"):
            fix = "name the environment variable that holds the API key"
            out.append(Problem(file, None, f"{key}: not set", fix))
        elif var and not env.get(str(var)):
            said = f"{key}: environment variable {var} is not set"
            out.append(Problem(file, None, said, f"export {var}=<your key> before running"))
    return out
