"""No import circle among our modules, type-only and function-level imports included: a module never needs, however
indirectly, a module that needs it. The graph is printed by `python tests/test_import_cycles.py` (the layers above
the line, each module's imports of ours)."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("errors", "datahome", "providers", "cache", "sandbox_index", "benchmarks", "reports", "runner")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges(path: Path, modules: set[str]) -> set[str]:
    """The modules of ours `path` imports anywhere in it (at the top, under `TYPE_CHECKING`, inside a function);
    `from package import module` names the module, `from module import name` the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(full if (full := f"{node.module}.{alias.name}") in modules else node.module
                         for alias in node.names)
    return found & modules


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    paths = {_module_name(path): path for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}
    return {name: _edges(path, set(paths)) - {name} for name, path in paths.items()}


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # the graph is a few hundred modules deep at most: recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def _packages_graph(graph: Mapping[str, set[str]]) -> Iterator[str]:
    """Lines `package -> packages`, between the top-level packages and the rooms of `runner` and `benchmarks`."""
    def unit(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2]) if parts[0] in ("runner", "benchmarks") and len(parts) > 1 else parts[0]

    edges: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges.setdefault(unit(module), set()).update(unit(target) for target in targets)
    for source in sorted(edges):
        yield f"{source} -> {', '.join(sorted(edges[source] - {source})) or '(nothing of ours)'}"


if __name__ == "__main__":
    graph = import_graph()
    print("\n".join(_packages_graph(graph)))
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports, circles: {circles(graph) or 'none'}",
          file=sys.stderr)
