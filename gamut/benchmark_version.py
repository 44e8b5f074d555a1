"""Which benchmark version the leaderboard's rows are judged against (the version a workbench
release names, ``gamut-workbench build release VERSION``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scoring.errors import GamutError

if TYPE_CHECKING:
    from gamut.project import Project

#: What ``gamut-workbench build release`` writes beside the released ``questions.jsonl``.
RELEASE_FILE = "release.json"


def benchmark_version(project: Project) -> str | None:
    """``[benchmark] benchmark_version``, else that of the ``release.json`` beside the
    questions file, else None (a question set made by hand names no version)."""
    given = project.cfg.benchmark.benchmark_version
    if given is not None:
        return given
    path = project.questions_path.parent / RELEASE_FILE
    if not path.is_file():
        return None
    try:
        version = json.loads(path.read_text(encoding="utf-8")).get("benchmark_version")
    except (ValueError, AttributeError):
        version = None
    if not isinstance(version, str) or not version:
        raise GamutError(
            f"{path}: no benchmark_version string (a release.json of "
            "`gamut-workbench build release` has one); fix the file, or give [benchmark] "
            f"benchmark_version in {project.config_file}"
        )
    return version
