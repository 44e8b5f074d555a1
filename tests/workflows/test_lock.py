"""The hash-locked requirements of the jobs that hold secrets match pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "runtime.txt"
WORKFLOWS = ROOT / ".github" / "workflows"
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s\\]+)")


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _lock() -> dict[str, tuple[Version, int]]:
    """Package -> (pinned version, number of hashes)."""
    out: dict[str, tuple[Version, int]] = {}
    current = ""
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        m = _PIN.match(line)
        if m:
            current = canonicalize_name(m[1])
            out[current] = (Version(m[2]), 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, n = out[current]
            out[current] = (version, n + 1)
    return out


def _requirements(key: str) -> list[Requirement]:
    data = _pyproject()
    if key == "build":
        build = data["build-system"]
        assert isinstance(build, dict)
        return [Requirement(r) for r in build["requires"]]
    project = data["project"]
    assert isinstance(project, dict)
    if key == "runtime":
        return [Requirement(r) for r in project["dependencies"]]
    return [Requirement(r) for r in project["optional-dependencies"][key]]


@pytest.mark.parametrize("key", ["runtime", "build"])
def test_every_dependency_is_pinned_at_a_version_pyproject_allows(key: str) -> None:
    lock = _lock()
    for req in _requirements(key):
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is not in {LOCK.name}: run `make lock`"
        version, _ = lock[name]
        assert req.specifier.contains(version, prereleases=True), (
            f"{req.name}=={version} breaks {req.specifier} in pyproject.toml: run `make lock`"
        )


def test_every_pin_carries_hashes_and_nothing_is_unpinned() -> None:
    lock = _lock()
    assert len(lock) > 20
    assert all(n >= 1 for _, n in lock.values()), [k for k, (_, n) in lock.items() if n == 0]
    text = LOCK.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            assert _PIN.match(line), f"not an exact pin: {line}"
    assert "--generate-hashes" in text.split("\n\n")[0] or "--generate-hashes" in text[:600]


def test_the_lock_holds_runtime_dependencies_only() -> None:
    lock = _lock()
    runtime = {canonicalize_name(r.name) for r in _requirements("runtime")}
    dev_only = {canonicalize_name(r.name) for r in _requirements("dev")} - runtime
    assert not dev_only & set(lock), sorted(dev_only & set(lock))


@pytest.mark.parametrize("name", ["score-submission.yml", "publish.yml"])
def test_the_jobs_with_secrets_install_from_the_lock_only(name: str) -> None:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert "make install-locked" in text
    assert ".[dev]" not in text and "make .venv/.installed" not in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("install-locked:", 1)[1].split("\n\n", 1)[0]
    assert "--require-hashes --no-deps -r $(LOCK)" in target
    assert "--no-deps --no-build-isolation -e ." in target


#: The project's own packages, whose third-party imports must all be runtime dependencies.
PACKAGES = ("scoring", "gamut", "generator", "workbench")


def _third_party_imports() -> dict[str, list[str]]:
    """Top-level module -> where it is imported, for every import statement of the packages
    (function-level, ``TYPE_CHECKING`` and ``except ImportError`` ones too) that is neither
    stdlib nor our own."""
    import ast
    import sys

    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in {*PACKAGES, "__future__"}:
                        continue
                    found.setdefault(top, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_third_party_import_is_a_locked_runtime_dependency() -> None:
    from importlib.metadata import packages_distributions

    imports = _third_party_imports()
    assert {"numpy", "click", "yaml"} <= set(imports)  # the walk sees the code
    dists = packages_distributions()
    runtime = {canonicalize_name(r.name) for r in _requirements("runtime")}
    lock = _lock()
    bad = []
    for module, where in sorted(imports.items()):
        names = {canonicalize_name(d) for d in dists.get(module, [])}
        if not names:
            bad.append(f"{module} ({where[0]}): no installed distribution provides it")
        elif not names & runtime:
            bad.append(
                f"{module} ({where[0]}): {', '.join(sorted(names))} is not in pyproject.toml's "
                "[project] dependencies (the jobs with secrets install those only)"
            )
        elif not names & set(lock):
            bad.append(f"{module} ({where[0]}): not pinned in {LOCK.name}; run `make lock`")
    assert not bad, "\n".join(bad)


def test_every_builder_the_config_offers_installs_with_the_runtime_set() -> None:
    """A config may choose any builder it offers, and the publish workflow installs the lock."""
    from typing import get_args

    from gamut.config import SiteConfig

    builders = get_args(SiteConfig.model_fields["builder"].annotation)
    assert set(builders) == {"mkdocs", "properdocs"}
    runtime = {canonicalize_name(r.name) for r in _requirements("runtime")}
    lock = _lock()
    for name in builders:
        assert name in runtime and name in lock, f"{name}: not a locked runtime dependency"
