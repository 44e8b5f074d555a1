"""The project configuration file, ``gamut.toml``: every problem reported at once, before any
work starts; relative paths are relative to the config file's folder."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoring.errors import Problem, ProblemsError
from scoring.judge.spec import JudgeConfig, judge_key_problems
from scoring.parameters import ScoringConfig
from scoring.rubric import Identifier

DEFAULT_CONFIG = "gamut.toml"
#: The environment variable naming the config file when ``--config`` is not given.
CONFIG_ENV = "GAMUT_CONFIG"
#: The marker that stands in for the GAMUT datasets' ids until the maintainers publish them.
PLACEHOLDER = "UNPUBLISHED"


def config_path(given: Path | str | None, environ: Mapping[str, str] | None = None) -> Path:
    """The config file to read: ``given``, else ``$GAMUT_CONFIG``, else ``gamut.toml``."""
    env = os.environ if environ is None else environ
    return Path(given or env.get(CONFIG_ENV) or DEFAULT_CONFIG)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BenchmarkConfig(_Section):
    """Where the benchmark's inputs are."""

    questions: str = Field(
        description="Local JSON Lines file, or hf://datasets/ORG/NAME@REVISION[/FILE] (pulled "
        "into store.questions by `gamut questions pull`)."
    )
    rubrics: str = Field(description="Local file/folder, or hf://datasets/ORG/NAME@REVISION.")
    rubrics_public: bool = False
    benchmark_version: str | None = Field(
        default=None,
        min_length=1,
        description="The question set's release version (release.json's benchmark_version, "
        "from `gamut-workbench build release`), stamped on every leaderboard row; unset: the "
        "benchmark_version of a release.json beside the questions file, else none "
        "(gamut.benchmark_version.benchmark_version).",
    )
    submissions: Path = Path("submissions")
    audit: str | None = Field(
        default=None,
        description="Human audit labels (docs/contract.md §11): a local folder of *.jsonl "
        "files, or hf://datasets/ORG/NAME@REVISION like the rubrics; none when unset.",
    )
    audit_simulated: bool = Field(
        default=False,
        description="The audit labels are simulated (the demo's): every page that shows them "
        "says so.",
    )

    @property
    def published(self) -> bool:
        """Whether submissions are open: no dataset id is still the :data:`PLACEHOLDER`."""
        return not any(PLACEHOLDER in v for v in (self.questions, self.rubrics))


class StoreConfig(_Section):
    """Where the engine keeps its state and writes its outputs."""

    cache: Path = Field(
        default=Path(".gamut/verdicts.sqlite"),
        description="The local working index of the ledger (SQLite); rebuilt when lost.",
    )
    ledger: Path = Field(
        default=Path(".gamut/ledger"),
        description="The verdict ledger, the store of record (a folder of Parquet shards).",
    )
    ledger_key_env: str | None = Field(
        default=None,
        description="Environment variable holding the ledger secret (required when rubrics "
        "are held: keys are keyed hashes).",
    )
    ledger_hub: str | None = Field(
        default=None,
        description="The private Hugging Face dataset (ORG/NAME) that `gamut ledger pull` "
        "and `push` sync the ledger with.",
    )
    results: Path = Path("results")
    private: Path = Field(
        default=Path(".gamut/private"),
        description="Cache for held rubrics fetched from the Hub; never inside the site.",
    )
    questions: Path = Field(
        default=Path(".gamut/questions"),
        description="Cache for the public question set pulled from the Hub.",
    )


class SiteConfig(_Section):
    """The static site's title and links."""

    title: str = "GAMUT leaderboard"
    description: str = "Factual completeness of open-ended answers about images."
    url: str | None = None
    repo_url: str | None = None
    out: Path = Path("site")
    demo_notice: bool = False
    #: The benchmark paper's BibTeX entry, shown on the site's Cite page (None: its title only).
    citation: str | None = Field(default=None, max_length=10_000)
    #: The site builder reading mkdocs.yml: MkDocs 1.6, or its maintained fork ProperDocs.
    builder: Literal["mkdocs", "properdocs"] = "mkdocs"


class PublishConfig(_Section):
    """Where published results go."""

    hf_dataset: str | None = None


class WorkbenchConfig(_Section):
    """The maintainers' private workbench (``gamut-workbench build ...``): never published."""

    dir: Path = Field(
        default=Path(".gamut/workbench"),
        description="The private folder holding every build step's state (mode 0700); never "
        "inside results or the site.",
    )
    propose_max_tokens: int = Field(
        default=2048,
        ge=16,
        description="Output-token limit of a `gamut-workbench build propose` reply.",
    )
    guard_max_tokens: int = Field(
        default=2048,
        ge=16,
        description="Output-token limit of a `gamut-workbench build guard` reply.",
    )
    draft_max_tokens: int = Field(
        default=8192,
        ge=16,
        description="Output-token limit of a `gamut-workbench build draft` reply (a whole "
        "meta-rubric; the judge's own max_tokens is sized for verdicts).",
    )
    refine_max_tokens: int = Field(
        default=16384,
        ge=16,
        description="Output-token limit of a `gamut-workbench build refine` reply (the draft's "
        "superset).",
    )

    def max_tokens(self, step: str) -> int:
        """The output-token limit of an LLM step's replies (its repair's too)."""
        out: int = getattr(self, f"{step}_max_tokens")
        return out


class GamutConfig(_Section):
    """The whole deployment."""

    benchmark: BenchmarkConfig
    store: StoreConfig = StoreConfig()
    scoring: ScoringConfig = ScoringConfig()
    judges: dict[Identifier, JudgeConfig] = Field(default_factory=dict)
    site: SiteConfig = SiteConfig()
    publish: PublishConfig = PublishConfig()
    workbench: WorkbenchConfig = WorkbenchConfig()
    root: Path = Field(default=Path("."), exclude=True)
    file: Path = Field(default=Path(DEFAULT_CONFIG), exclude=True)

    @property
    def primary_judge(self) -> str:
        """Name of the judge whose scores rank the leaderboard."""
        self.require_judges()
        return next(n for n, j in self.judges.items() if j.primary)

    def require_judges(self) -> None:
        """Raise ProblemsError unless the config defines judges."""
        if not self.judges:
            raise ProblemsError(
                [
                    Problem(
                        str(self.file),
                        None,
                        "no judges: this command needs at least one [judges.NAME] table",
                        "add the judges (see demo/gamut.toml for an example)",
                    )
                ],
                f"invalid config {self.file}",
            )

    def path(self, p: Path | str) -> Path:
        """Resolve a path from the config against the config file's folder (``..`` folded)."""
        p = Path(p)
        return p if p.is_absolute() else Path(os.path.normpath(self.root / p))


def _primary_problem(raw: dict[str, Any], file: str) -> Problem | None:
    """Exactly one judge must be the primary (read from the raw file, so it is reported with
    every other problem)."""
    judges = raw.get("judges")
    if not isinstance(judges, dict):
        return None
    primaries = [n for n, j in judges.items() if isinstance(j, dict) and j.get("primary") is True]
    if len(primaries) == 1 or not judges:
        return None
    found = ", ".join(primaries) if primaries else "none"
    return Problem(
        file,
        None,
        f"judges: exactly one judge must have primary = true (found: "
        f"{found}); the primary judge ranks the leaderboard",
        "set primary = true on exactly one [judges.NAME] table",
    )


def load_config(
    path: Path | str | None = None,
    *,
    require_keys: bool | Iterable[str] = False,
    environ: Mapping[str, str] | None = None,
) -> GamutConfig:
    """Read and validate a ``gamut.toml`` (default: :func:`config_path`'s choice); with
    ``require_keys``, also that these judges' (True: all judges') API key variables are set.
    Raises ProblemsError, one problem per broken rule, with the key that holds it."""
    path = config_path(path)
    file = str(path)
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProblemsError(
            [
                Problem(
                    file,
                    None,
                    "config file not found",
                    f"run from the repository root, pass --config PATH or set {CONFIG_ENV}",
                )
            ]
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ProblemsError(
            [Problem(file, None, f"not valid TOML: {exc}", "fix the syntax")]
        ) from None
    primary = _primary_problem(raw, file)
    problems: list[Problem] = [] if primary is None else [primary]
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
        raise ProblemsError(problems, f"invalid config {file}") from None
    if problems:
        raise ProblemsError(problems, f"invalid config {file}")
    return cfg.model_copy(update={"root": path.resolve().parent, "file": path})
