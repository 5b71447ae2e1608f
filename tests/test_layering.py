"""Imports flow one way (commands -> core -> gpu -> shared helpers) and never in a circle.

Every ``import`` in the package is read from the source (module level and inside
functions alike: a lazy import is still a dependency), resolved to a module of the
package, and checked against the layers:

- ``iclr25/gpu/`` imports nothing from ``iclr25/core/``, ``iclr25/commands/`` or the CLI;
- ``iclr25/core/`` imports nothing from ``iclr25/commands/``, the runner or the CLI;
- no two modules depend on each other, directly or through others.

Plus one naming rule for ``iclr25/commands/``: a module is a registered command
(``cli.COMMAND_MODULES``) or a helper of one, named ``<command module>_<role>.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "iclr25"
CLI_LAYER = (
    "iclr25.cli",
    "iclr25.runner",
    "iclr25.demo",
    "iclr25.commands",
    "iclr25.parallel_options",
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        for name in names:
            if name.startswith("iclr25"):
                resolved = _resolve(name)
                if resolved and resolved != module:
                    deps.add(resolved)
    # ``from iclr25.x import y`` adds both iclr25.x.y (when a module) and iclr25.x; a
    # package's own __init__ is not a dependency of its children's siblings beyond that
    return deps


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_gpu_imports_nothing_from_core_commands_or_cli():
    upward = {
        m: sorted(d for d in deps if _in(d, "iclr25.core", *CLI_LAYER))
        for m, deps in GRAPH.items()
        if _in(m, "iclr25.gpu")
    }
    assert {m: d for m, d in upward.items() if d} == {}


def test_core_imports_nothing_from_commands_or_cli():
    upward = {
        m: sorted(d for d in deps if _in(d, *CLI_LAYER))
        for m, deps in GRAPH.items()
        if _in(m, "iclr25.core")
    }
    assert {m: d for m, d in upward.items() if d} == {}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _without_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` re-exporting its children is not a cycle with them."""
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}


def test_no_import_cycles():
    assert _cycles(_without_parent_packages(GRAPH)) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_layer_check_sees_lazy_imports(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text("def f():\n    from iclr25.core.gpu_bench import ops\n")
    assert "iclr25.core.gpu_bench.ops" in _imports("iclr25.gpu.fake", src)


def test_command_modules_follow_one_naming_rule():
    from iclr25.cli import COMMAND_MODULES

    names = {p.stem for p in (PACKAGE / "commands").glob("*.py") if p.stem != "__init__"}
    strays = [
        n
        for n in sorted(names)
        if n not in COMMAND_MODULES and not any(n.startswith(c + "_") for c in COMMAND_MODULES)
    ]
    assert strays == [], "name helpers of a command <command module>_<role>.py"
