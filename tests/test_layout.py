"""The package contract (ARCHITECTURE.md, "Packages"): gamut -> scoring, gamut -> generator,
generator -> scoring's public names; nothing points back.

Every import statement counts, including those inside functions and under ``TYPE_CHECKING``: a
lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Third-party packages the engine must not use: the CLI, the terminal and the Hub are the
#: application's business.
ENGINE_FORBIDDEN = ("gamut", "generator", "click", "rich", "huggingface_hub")
#: The engine modules the site may import from, and only the names in their ``__all__``.
SITE_ALLOWED = (
    "scoring",
    "scoring.errors",
    "scoring.lazy",
    "scoring.numbers",
    "scoring.questions",
    "scoring.storage",
    "scoring.submissions",
    "scoring.tables",
    "scoring.verdicts",
)


def _imports(package: str) -> list[tuple[str, int, str, list[str]]]:
    """(file, line, imported module, imported names) for every import in ``package``."""
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out += [(rel, node.lineno, a.name, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.append((rel, node.lineno, node.module, [a.name for a in node.names]))
    return out


def _top(module: str) -> str:
    return module.split(".")[0]


def test_the_engine_imports_no_application_site_cli_or_hub() -> None:
    bad = [
        f"{file}:{line}: imports {module}"
        for file, line, module, _ in _imports("scoring")
        if _top(module) in ENGINE_FORBIDDEN
    ]
    assert not bad, "the engine must not depend on:\n" + "\n".join(bad)


def test_the_site_imports_no_application_and_only_public_engine_names() -> None:
    bad = []
    for file, line, module, names in _imports("generator"):
        if _top(module) == "gamut":
            bad.append(f"{file}:{line}: imports {module}")
        elif _top(module) == "scoring":
            if module not in SITE_ALLOWED:
                bad.append(f"{file}:{line}: imports engine internals {module}")
                continue
            public = set(getattr(importlib.import_module(module), "__all__", ()))
            bad += [f"{file}:{line}: {module}.{n} is not public" for n in names if n not in public]
    assert not bad, "the site reads only the engine's public names:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", ["scoring", "generator", "gamut"])
def test_every_module_imports_on_its_own(package: str) -> None:
    """No import cycle hides behind import order: each module imports first in a fresh process."""
    import subprocess
    import sys

    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in sorted((ROOT / package).rglob("*.py"))
        if p.name != "__main__.py"
    ]
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for m in {modules!r}:\n"
        "    for k in [k for k in sys.modules if k.split('.')[0] in "
        "('scoring', 'generator', 'gamut')]:\n"
        "        del sys.modules[k]\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{m}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "", result.stdout
