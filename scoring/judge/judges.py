"""Configured judges: config checks, backend construction, identity and cache keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scoring.errors import Problem, ProblemsError
from scoring.judge import providers
from scoring.judge.backends import Backend
from scoring.judge.cache import judge_identity
from scoring.judge.prompt import PromptTemplate, load_template
from scoring.judge.spec import JudgeConfig, judge_key_problems


@dataclass(frozen=True)
class BuiltJudge:
    """A configured judge, ready to call: its template, backend and identity."""

    name: str
    config: JudgeConfig
    template: PromptTemplate
    backend: Backend
    identity: str
    label: str


def build_judges(
    judges: Mapping[str, JudgeConfig],
    names: list[str] | None,
    need_keys: bool,
    *,
    root: Path,
    config_file: str,
) -> list[BuiltJudge]:
    """Check the named judges' config and construct their backends (no call is made)."""
    file = config_file
    wanted = list(judges) if names is None else list(dict.fromkeys(names))
    problems = [
        Problem(file, None, f"no judge named {n!r}", f"one of: {', '.join(judges)}")
        for n in wanted
        if n not in judges
    ]
    if need_keys:
        problems += judge_key_problems(judges, file, [n for n in wanted if n in judges])
    if problems:
        raise ProblemsError(problems, "cannot start the judges")
    out = []
    for name in wanted:
        jc = judges[name]
        template = load_template(jc.prompt_version)
        key = os.environ.get(jc.api_key_env) if jc.api_key_env and need_keys else None
        backend = providers.backend_class(jc.provider)(name, jc, key, root)
        identity = judge_identity(
            {
                "provider": jc.provider,
                "model": jc.model,
                "prompt_version": template.version,
                "prompt_digest": template.digest,
                "decoding": backend.decoding(),
                "extra": backend.identity_extra(),
            }
        )
        out.append(
            BuiltJudge(
                name,
                jc,
                template,
                backend,
                identity,
                f"{jc.provider}:{jc.model}@{template.version}",
            )
        )
    return out
