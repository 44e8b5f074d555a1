"""The project configuration file, ``gamut.toml`` (SPEC section 10).

Every problem in the file is reported at once, before any work starts. Relative paths are relative
to the config file's folder.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scoring.errors import ConfigError, Problem
from scoring.rubric import Identifier
from scoring.scorer import ScoringConfig

DEFAULT_CONFIG = "gamut.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BenchmarkConfig(_Section):
    """Where the benchmark's inputs are."""

    questions: Path
    rubrics: str = Field(description="Local file/folder, or hf://datasets/ORG/NAME@REVISION.")
    rubrics_public: bool = False
    submissions: Path = Path("submissions")


class StoreConfig(_Section):
    """Where the engine keeps its state and writes its outputs."""

    cache: Path = Path(".gamut/verdicts.sqlite")
    results: Path = Path("results")
    private: Path = Field(
        default=Path(".gamut/private"),
        description="Cache for held rubrics fetched from the Hub; never inside the site.",
    )


class JudgeConfig(_Section):
    """One LLM judge. Its identity is provider + model + prompt version + decoding settings."""

    provider: Literal["openai", "anthropic", "replay"]
    model: Annotated[str, Field(min_length=1)]
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    family: Annotated[str, Field(min_length=1)]
    max_concurrency: Annotated[int, Field(ge=1, le=1024)] = 16
    primary: bool = False
    temperature: float = 0.0
    max_tokens: Annotated[int, Field(ge=16)] = 400
    timeout_s: Annotated[float, Field(gt=0)] = 120.0
    prompt_version: str = "v1"
    replay: Path | None = Field(
        default=None, description="For provider 'replay': the stored verdict file to replay."
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

    @model_validator(mode="after")
    def _replay_file(self) -> JudgeConfig:
        if self.provider == "replay" and self.replay is None:
            raise ValueError("provider 'replay' needs replay = \"PATH\" (the stored verdicts)")
        if self.provider != "replay" and self.replay is not None:
            raise ValueError(f"'replay' applies only to provider 'replay', not {self.provider!r}")
        return self


class SiteConfig(_Section):
    """The static site's title and links."""

    title: str = "GAMUT leaderboard"
    description: str = "Factual completeness of open-ended answers about images."
    url: str | None = None
    repo_url: str | None = None
    out: Path = Path("site")
    demo_notice: bool = False


class PublishConfig(_Section):
    """Where published results go."""

    hf_dataset: str | None = None


class GamutConfig(_Section):
    """The whole deployment."""

    benchmark: BenchmarkConfig
    store: StoreConfig = StoreConfig()
    scoring: ScoringConfig = ScoringConfig()
    judges: dict[Identifier, JudgeConfig] = Field(min_length=1)
    site: SiteConfig = SiteConfig()
    publish: PublishConfig = PublishConfig()
    root: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _one_primary(self) -> GamutConfig:
        primaries = [n for n, j in self.judges.items() if j.primary]
        if len(primaries) != 1:
            found = ", ".join(primaries) if primaries else "none"
            raise ValueError(
                f"exactly one judge must have primary = true (found: {found}); "
                "the primary judge ranks the leaderboard"
            )
        return self

    @property
    def primary_judge(self) -> str:
        """Name of the judge whose scores rank the leaderboard."""
        return next(n for n, j in self.judges.items() if j.primary)

    def path(self, p: Path) -> Path:
        """Resolve a path from the config against the config file's folder."""
        return p if p.is_absolute() else (self.root / p)


def _primary_problem(raw: dict[str, Any], file: str) -> Problem | None:
    judges = raw.get("judges")
    if not isinstance(judges, dict):
        return None
    primaries = [n for n, j in judges.items() if isinstance(j, dict) and j.get("primary") is True]
    if len(primaries) == 1:
        return None
    found = ", ".join(primaries) if primaries else "none"
    return Problem(
        file,
        None,
        f"judges: exactly one judge must have primary = true (found: "
        f"{found}); the primary judge ranks the leaderboard",
        "set primary = true on exactly one [judges.NAME] table",
    )


def judge_key_problems(
    judges: Mapping[str, Mapping[str, Any] | JudgeConfig],
    file: str,
    names: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Problems with the API keys of the named judges (all judges when ``names`` is None).

    A judge that calls a provider needs ``api_key_env`` (unless it has a ``base_url``, as local
    servers need no key), and that environment variable must be set and non-empty. The key itself
    never appears in a message.
    """
    env = os.environ if environ is None else environ
    out: list[Problem] = []
    wanted = set(judges) if names is None else set(names)
    for name, j in judges.items():
        d = j.model_dump() if isinstance(j, JudgeConfig) else j
        if name not in wanted or not isinstance(d, Mapping) or d.get("provider") == "replay":
            continue
        var = d.get("api_key_env")
        if not var:
            if not d.get("base_url"):
                out.append(
                    Problem(
                        file,
                        None,
                        f"judges.{name}.api_key_env: not set",
                        "name the environment variable that holds the API key",
                    )
                )
        elif not env.get(str(var)):
            out.append(
                Problem(
                    file,
                    None,
                    f"judges.{name}.api_key_env: environment variable {var} is not set",
                    f"export {var}=<your key> before running",
                )
            )
    return out


def load_config(
    path: Path | str = DEFAULT_CONFIG,
    *,
    require_keys: bool | Iterable[str] = False,
    environ: Mapping[str, str] | None = None,
) -> GamutConfig:
    """Read and validate a ``gamut.toml``.

    Args:
        path: the config file.
        require_keys: also check that the API key variables of these judges (True: of all judges)
            are set, reporting those problems together with every other one.
        environ: the environment to check keys in (default: ``os.environ``).

    Raises:
        ConfigError: one problem per broken rule, with the key that holds it.
    """
    path = Path(path)
    file = str(path)
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            [
                Problem(
                    file,
                    None,
                    "config file not found",
                    "run from the repository root or pass --config PATH",
                )
            ]
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            [Problem(file, None, f"not valid TOML: {exc}", "fix the syntax")]
        ) from None
    problems: list[Problem] = []
    if require_keys is not False and isinstance(raw.get("judges"), dict):
        names = None if require_keys is True else list(require_keys)
        problems.extend(judge_key_problems(raw["judges"], file, names, environ))
    try:
        cfg = GamutConfig.model_validate(raw)
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            key = ".".join(str(p) for p in e["loc"])
            msg = e["msg"].removeprefix("Value error, ")
            fix = {
                "extra_forbidden": "remove the key or fix its spelling",
                "missing": "add the key",
            }.get(e["type"], "see the commented gamut.toml in the repository")
            problems.append(Problem(file, None, f"{key}: {msg}" if key else msg, fix))
        primary = _primary_problem(raw, file)
        if primary is not None and not any("primary = true" in p.message for p in problems):
            problems.append(primary)
        raise ConfigError(problems, f"invalid config {file}") from None
    if problems:
        raise ConfigError(problems, f"invalid config {file}")
    return cfg.model_copy(update={"root": path.resolve().parent})
