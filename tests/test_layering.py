"""Architecture kept by a test: imports run downward (DESIGN.md), the engine never names a benchmark."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# package -> packages it may import (besides itself and the standard library / third parties).
# `runner.errors` is a leaf module (no imports of ours): the user-facing error base every layer raises and the
# CLI prints without a traceback.
ALLOWED = {
    "sandbox_index": {"runner.errors"},
    "cache": {"providers", "runner.errors"},  # the cache stores ChatRequest/ChatResponse values
    "providers": {"runner.errors"},
    "benchmarks": {"sandbox_index", "providers", "runner.errors"},
    "reports": {"runner", "benchmarks", "providers", "cache", "sandbox_index"},
    "runner": {"providers", "cache", "sandbox_index", "benchmarks", "reports"},
}
OURS = set(ALLOWED)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _violations() -> list[str]:
    bad: list[str] = []
    for package, allowed in ALLOWED.items():
        for path in sorted((REPO / package).rglob("*.py")):
            for name in _imports(path):
                top = name.split(".")[0]
                if top not in OURS or top == package:
                    continue
                if not any(name == a or name.startswith(a + ".") or (top == a and "." not in a) for a in allowed):
                    bad.append(f"{path.relative_to(REPO)} imports {name}")
    return bad


def test_imports_run_downward() -> None:
    assert _violations() == []


def test_engine_never_names_a_benchmark() -> None:
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "runner").rglob("*.py")
        if "travelplanner" in path.read_text(encoding="utf-8").lower()
        and path.parent.name != "cli"  # the CLI wires benchmark commands (evaluate, tool, demo)
    ]
    assert offenders == []


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from runner.gateway import Gateway\nimport sandbox_index\n")
    assert _imports(probe) == {"runner.gateway", "sandbox_index"}


def test_errors_module_is_a_leaf() -> None:
    assert not {n for n in _imports(REPO / "runner" / "errors.py") if n.split(".")[0] in OURS}
