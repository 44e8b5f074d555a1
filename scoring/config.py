"""The project configuration file, ``gamut.toml`` (SPEC section 10).

Every problem in the file is reported at once, before any work starts. Relative paths are relative
to the config file's folder.
"""

from __future__ import annotations

import tomllib
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


def load_config(path: Path | str = DEFAULT_CONFIG) -> GamutConfig:
    """Read and validate a ``gamut.toml``.

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
    try:
        cfg = GamutConfig.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for e in exc.errors(include_url=False):
            key = ".".join(str(p) for p in e["loc"])
            msg = e["msg"].removeprefix("Value error, ")
            fix = {
                "extra_forbidden": "remove the key or fix its spelling",
                "missing": "add the key",
            }.get(e["type"], "see the commented gamut.toml in the repository")
            problems.append(Problem(file, None, f"{key}: {msg}" if key else msg, fix))
        raise ConfigError(problems, f"invalid config {file}") from None
    return cfg.model_copy(update={"root": path.resolve().parent})
