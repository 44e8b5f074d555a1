"""The package contract (ARCHITECTURE.md, "Packages"): gamut -> scoring, gamut -> generator,
generator -> scoring's public names, workbench -> any of them; nothing points back; and inside a
package no two modules import each other, directly or around a loop.

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
ENGINE_FORBIDDEN = ("gamut", "generator", "workbench", "click", "rich", "huggingface_hub")
#: The engine modules the site may import from, and only the names in their ``__all__``.
SITE_ALLOWED = (
    "scoring",
    "scoring.errors",
    "scoring.layout",
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


def _module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def _file_of(module: str) -> str:
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = ROOT / module.replace(".", "/") / "__init__.py"
    return str(path.relative_to(ROOT))


def module_graph(package: str, root: Path = ROOT) -> dict[str, dict[str, int]]:
    """Module -> {module of the same package it imports: the line of the first such import}.

    ``from a.b import c`` points at the module ``a.b.c`` when there is one, else at ``a.b``;
    relative imports are resolved. Importing a module's package (``a.b``'s ``__init__``) is not
    counted for the module itself: Python runs it first, but it is not an import the code makes.
    """
    paths = {_module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    module = ".".join(parts[: len(parts) - node.level + 1])
                    module += f".{node.module}" if node.module else ""
                else:
                    module = node.module or ""
                targets = [
                    f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module
                    for a in node.names
                ]
            for t in targets:
                if t in paths and t != name:
                    edges.setdefault(t, node.lineno)
        graph[name] = edges
    return graph


def import_loops(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Each set of modules that import each other around a loop (a strongly connected component
    of more than one module, found by Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(loops)


def _loop_report(graph: dict[str, dict[str, int]], loop: list[str]) -> str:
    members = set(loop)
    lines = [
        f"  {_file_of(m)}:{line}: {m} imports {t}"
        for m in loop
        for t, line in sorted(graph[m].items())
        if t in members
    ]
    return " <-> ".join(loop) + "\n" + "\n".join(lines)


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
        if _top(module) in ("gamut", "workbench"):
            bad.append(f"{file}:{line}: imports {module}")
        elif _top(module) == "scoring":
            if module not in SITE_ALLOWED:
                bad.append(f"{file}:{line}: imports engine internals {module}")
                continue
            public = set(getattr(importlib.import_module(module), "__all__", ()))
            bad += [f"{file}:{line}: {module}.{n} is not public" for n in names if n not in public]
    assert not bad, "the site reads only the engine's public names:\n" + "\n".join(bad)


def test_the_leaderboard_application_imports_no_workbench() -> None:
    """The workbench builds on the application (its CLI helpers, the config); the application,
    which a reader of the leaderboard walks through, never reaches into the workbench."""
    bad = [
        f"{file}:{line}: imports {module}"
        for file, line, module, _ in _imports("gamut")
        if _top(module) == "workbench"
    ]
    assert not bad, "gamut must not depend on the workbench:\n" + "\n".join(bad)


PACKAGES = ["scoring", "generator", "gamut", "workbench"]


@pytest.mark.parametrize("package", PACKAGES)
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
        f"{tuple(PACKAGES)!r}]:\n"
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


@pytest.mark.parametrize("package", PACKAGES)
def test_no_two_modules_of_a_package_import_each_other(package: str) -> None:
    """Counting imports inside functions and under ``TYPE_CHECKING``: a loop hidden there still
    ties the modules together. Fix: move what both need into a leaf module that imports
    neither (as ``scoring/judge/backends.py`` and ``scoring/judge/items.py`` are)."""
    graph = module_graph(package)
    loops = import_loops(graph)
    assert not loops, f"{len(loops)} import loop(s) in {package}/:\n" + "\n".join(
        _loop_report(graph, loop) for loop in loops
    )


def test_the_loop_finder_finds_a_loop_hidden_in_a_function_and_under_type_checking() -> None:
    """The finder itself, on modules that loop only through a lazy and a TYPE_CHECKING import."""
    graph = {"p.a": {"p.b": 3}, "p.b": {"p.c": 5}, "p.c": {"p.a": 9}, "p.d": {"p.a": 1}}
    assert import_loops(graph) == [["p.a", "p.b", "p.c"]]
    assert import_loops({"p.a": {"p.b": 1}, "p.b": {}}) == []


def test_the_graph_counts_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """Read from real files: an import in a function and one under TYPE_CHECKING are edges."""
    pkg = tmp_path / "probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from probe import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    (pkg / "c.py").write_text("from probe.a import f\n")
    graph = module_graph("probe", tmp_path)
    assert graph == {
        "probe": {},
        "probe.a": {"probe.b": 2},
        "probe.b": {"probe.a": 3},
        "probe.c": {"probe.a": 1},
    }
    assert import_loops(graph) == [["probe.a", "probe.b"]]


#: The engine's layers, lowest first: a module imports only from its own layer and those below.
#: The package's root (``scoring``, which holds ``__version__`` and imports lazily) is above all.
ENGINE_LAYERS = (
    ("errors", "storage", "fastjson", "lazy", "numbers", "jsonl", "csvcells"),
    (
        "rubric",
        "compiler",
        "parameters",
        "rubric_io",
        "check_table",
        "questions",
        "verdicts",
        "scorer",
    ),
    ("submissions", "audit_line", "audit_sample", "layout", "audit"),
    ("ledger", "judge"),
    ("tables",),
)


def _layer(module: str) -> int | None:
    part = module.split(".")[1] if "." in module else ""
    return next((i for i, names in enumerate(ENGINE_LAYERS) if part in names), None)


def test_every_engine_module_has_a_layer() -> None:
    """A new module of the engine is given its place in :data:`ENGINE_LAYERS`."""
    missing = [m for m in module_graph("scoring") if m != "scoring" and _layer(m) is None]
    assert not missing, f"add these to ENGINE_LAYERS in tests/test_layout.py: {missing}"


def test_the_engine_imports_only_downwards() -> None:
    """Base (I/O with its limits, atomic writes, errors) under rubrics and questions, under
    submissions and the audit, under the judge and the ledger, under the tables. Counting lazy
    imports: none may point up. Fix: move what both need down to the lower layer."""
    graph = module_graph("scoring")
    upward = [
        f"{_file_of(m)}:{line}: {m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
        for m, targets in graph.items()
        for t, line in targets.items()
        if m != "scoring" and t != "scoring" and (_layer(t) or 0) > (_layer(m) or 0)
    ]
    assert not upward, "\n".join(upward)
