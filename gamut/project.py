"""A project: one config file, every path it names resolved, every input read once, on first use
(the engine's functions take values; a :class:`Project` is where the application gets them)."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gamut.config import GamutConfig, load_config
from generator.spec import SiteSpec
from scoring.errors import Problem, ProblemsError
from scoring.layout import ResultsLayout, SubmissionsLayout
from scoring.questions import Question, Setting, load_questions

if TYPE_CHECKING:
    from gamut.public_set import QuestionSource
    from scoring.check_table import CheckTable
    from scoring.compiler import Check
    from scoring.judge import BuiltJudge, JudgeInputs
    from scoring.judge.pairs import PairPlan
    from scoring.ledger import KeyScheme, Ledger
    from scoring.rubric import MetaRubric
    from scoring.submissions.digests import DigestCache


def _tuple(items: list[Any] | None) -> tuple[Any, ...] | None:
    return None if items is None else tuple(items)


class Project:
    """The deployment described by one validated config."""

    def __init__(self, cfg: GamutConfig) -> None:
        self.cfg = cfg
        self._units: dict[tuple[tuple[str, ...] | None, tuple[Setting, ...] | None], Any] = {}
        self._plans: dict[tuple[Any, ...], list[PairPlan]] = {}
        path = cfg.path  # every path of the config, resolved against its folder
        self.config_file = str(cfg.file)  # as given, for messages
        self.submissions_root = path(cfg.benchmark.submissions)
        self.submissions = SubmissionsLayout(self.submissions_root)
        self.site_out = path(cfg.site.out)
        self.results = path(cfg.store.results)
        self.results_layout = ResultsLayout(self.results)
        self.verdict_table = self.results_layout.verdicts  # the judge writes, the scorer reads
        self.workbench_path = path(cfg.workbench.dir)
        self.cache_path = path(cfg.store.cache)  # the ledger's local working index (SQLite)
        self.ledger_path = path(cfg.store.ledger)
        self.private = path(cfg.store.private)  # held rubrics, run records; never published
        self.rubrics_public = cfg.benchmark.rubrics_public

    @classmethod
    def load(cls, path: Path | str | None = None) -> Project:
        """The project of the config file at ``path``."""
        return cls(load_config(path))

    def path(self, p: Path) -> Path:
        """A path from the config, resolved against the config file's folder."""
        return self.cfg.path(p)

    @property
    def question_source(self) -> QuestionSource:
        """Where the public questions come from: a local file, or a Hub set and its cache."""
        from gamut.public_set import QuestionSource

        cfg = self.cfg
        value = cfg.benchmark.questions
        return QuestionSource(
            value, cfg.file, self.path(Path(value)), self.path(cfg.store.questions)
        )

    @property
    def questions_path(self) -> Path:
        """The public questions file (the pulled copy of a Hub dataset)."""
        from gamut.public_set import questions_file

        return questions_file(self.question_source)

    @cached_property
    def key_scheme(self) -> KeyScheme:
        """How verdict keys are hashed: keyed by the ledger secret when rubrics are held."""
        from scoring.ledger import KeyScheme

        if self.rubrics_public:
            return KeyScheme.public()
        var = self.cfg.store.ledger_key_env
        secret = os.environ.get(var) if var else None
        if not secret:
            problem = (
                "store.ledger_key_env: not set"
                if not var
                else f"store.ledger_key_env: environment variable {var} is not set"
            )
            raise ProblemsError(
                [
                    Problem(
                        self.config_file,
                        None,
                        f"{problem}; rubrics are held, so verdict keys are keyed hashes",
                        'set [store] ledger_key_env = "GAMUT_LEDGER_KEY" and export that '
                        "variable (make one with: python -c 'import secrets; "
                        "print(secrets.token_hex(32))'); keep it with the ledger's other "
                        "secrets",
                    )
                ],
                "no ledger secret",
            )
        return KeyScheme.keyed(secret)

    @cached_property
    def ledger(self) -> Ledger:
        """The verdict ledger (created when missing)."""
        from scoring.ledger import Ledger

        return Ledger.open(self.ledger_path, self.key_scheme, held=not self.rubrics_public)

    def pair_plans(
        self,
        judges: list[str] | None = None,
        submissions: list[str] | None = None,
        settings: list[Setting] | None = None,
        *,
        need_keys: bool = False,
    ) -> list[PairPlan]:
        """The named judges' pairs over the selected units, with their keys (computed once)."""
        from scoring.judge.pairs import pair_plans

        key = (_tuple(judges), _tuple(submissions), _tuple(settings), need_keys)
        with_keys = (*key[:3], True)
        if not need_keys and with_keys in self._plans:  # the same pairs, judges with API keys
            return self._plans[with_keys]
        if key not in self._plans:
            built = self.judges(judges, need_keys=need_keys)
            units = self.units(submissions, settings).units
            self._plans[key] = pair_plans(units, built, self.key_scheme)
        return self._plans[key]

    @cached_property
    def digests(self) -> DigestCache:
        """The file digests that a run's validation and scoring share."""
        from scoring.submissions import Limits
        from scoring.submissions.digests import DigestCache

        return DigestCache(Limits())

    def _resolve(self, key: str, value: str) -> Path:
        """A local rubrics or audit path, or a Hub reference fetched into ``<private>/hub``."""
        from gamut import hub

        hub.check_published(key, value, self.cfg.file)
        if not hub.is_hub_uri(value):
            return self.path(Path(value))
        published = {"store.results": self.results, "site.out": self.site_out}
        return hub.snapshot_path(value, hub.private_cache(self.private, published) / "hub")

    @cached_property
    def rubrics_path(self) -> Path:
        """The local file or folder of the rubrics (a Hub reference fetched first)."""
        return self._resolve("benchmark.rubrics", self.cfg.benchmark.rubrics)

    @cached_property
    def audit_path(self) -> Path | None:
        """The local folder of the human audit labels, None if unset."""
        value = self.cfg.benchmark.audit
        return None if value is None else self._resolve("benchmark.audit", value)

    @cached_property
    def questions(self) -> list[Question]:
        """The public questions, in file order."""
        return load_questions(self.questions_path)

    @cached_property
    def rubrics(self) -> dict[str, MetaRubric]:
        """Every rubric, by question id (validated; raises ``RubricError`` listing problems)."""
        from scoring.rubric_io import load_rubrics

        return load_rubrics([self.rubrics_path], held=not self.rubrics_public)

    @cached_property
    def checks(self) -> dict[str, list[Check]]:
        """The compiled checks, by question id."""
        from scoring.rubric_io import compile_all

        return compile_all(self.rubrics)

    @cached_property
    def check_table(self) -> CheckTable:
        """The compiled checks as arrays (ids and codes, no text)."""
        from scoring.check_table import checks_of

        return checks_of(self.rubrics)

    def units(
        self, submissions: list[str] | None = None, settings: list[Setting] | None = None
    ) -> JudgeInputs:
        """The responses to judge, each with its question's checks (read once per selection)."""
        from scoring.judge import response_units

        key = (_tuple(submissions), _tuple(settings))
        if key not in self._units:
            self._units[key] = response_units(
                self.questions, self.checks, self.submissions_root, submissions, settings
            )
        out: JudgeInputs = self._units[key]
        return out

    def judges(self, names: list[str] | None = None, *, need_keys: bool) -> list[BuiltJudge]:
        """The named judges (default: all), built and ready to call."""
        from scoring.judge import build_judges

        self.cfg.require_judges()
        return build_judges(
            self.cfg.judges, names, need_keys, root=self.cfg.root, config_file=self.config_file
        )

    def judge_provenance(self) -> dict[str, dict[str, Any]]:
        """Judge name -> identity (provider, model, family, prompt template), in config order."""
        from scoring.judge.prompt import judge_provenance

        self.cfg.require_judges()
        return {name: judge_provenance(j) for name, j in self.cfg.judges.items()}

    def site_spec(self) -> SiteSpec:
        """What the site build reads and writes."""
        from gamut.history import read_history

        site, published = self.cfg.site, self.cfg.benchmark.published
        return SiteSpec(
            root=self.cfg.root,
            results=self.results,
            out=self.site_out,
            rubrics_public=self.rubrics_public,
            questions=self.questions_path,
            submissions=self.submissions_root,
            title=site.title,
            description=site.description,
            url=site.url,
            repo_url=site.repo_url,
            demo_notice=site.demo_notice,
            citation=site.citation,
            history=read_history(self.cfg.root / self.cfg.file.name, self.submissions_root),
            builder=site.builder,
            submissions_open=published,
        )
