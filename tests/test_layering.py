"""Architecture kept by a test: imports run downward (docs/architecture.md §2), between packages and between `runner`'s
rooms; the engine never names a benchmark."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# package -> packages it may import (besides itself and the standard library / third parties).
# `errors` (the user-facing error base the CLI prints without a traceback) and `datahome` (where files live) sit
# below all of these; `BOTTOM` at the end keeps them there.
ALLOWED = {
    "sandbox_index": set(),
    "cache": {"providers"},  # the cache stores ChatRequest/ChatResponse values
    "providers": set(),
    "benchmarks": {"sandbox_index", "providers"},
    "reports": {"runner.store", "benchmarks"},  # a finished run as the store holds it, read as its benchmark says
    "runner": {"providers", "cache", "benchmarks", "reports"},  # TravelPlanner's database only through benchmarks
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


BENCHMARK_NAMES = tuple(sorted({variant for package in (REPO / "benchmarks").glob("*/benchmark.py")
                                 for variant in (package.parent.name, package.parent.name.replace("_", "-"),
                                                 package.parent.name.replace("_", " "))}))
"""Every benchmark's package name, spelt as a folder, a command-line name and in prose: read from `benchmarks/`, so a
new benchmark is covered as it lands."""


# runner's rooms, bottom up: room -> rooms of `runner` it may import. The CLI (`runner.cli`) sits on top of them all.
ROOMS = {
    "runner.outcomes": set(),  # the failure policy every room reads
    "runner.ladder": {"runner.outcomes"},  # one LLM call; its storage only through interfaces (Ledger, BatchBook)
    "runner.store": {"runner.outcomes", "runner.ladder"},  # a run directory's files
    "runner.team": {"runner.outcomes", "runner.ladder"},  # the team's PostgreSQL: implements the ladder's interfaces
    "runner.engine": {"runner.outcomes", "runner.ladder", "runner.store", "runner.team"},  # running a run
    "runner.mock_server": set(),  # a development tool the CLI starts (`mock-server`, `demo`); imports providers only
}


def _room_of(name: str) -> str | None:
    return next((room for room in (*ROOMS, "runner.cli") if name == room or name.startswith(room + ".")), None)


def _room_violations() -> list[str]:
    bad: list[str] = []
    for room, allowed in ROOMS.items():
        base = REPO / room.replace(".", "/")
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in paths:
            for name in _imports(path):
                target = _room_of(name)
                if name.split(".")[0] == "reports" or (target not in (None, room) and target not in allowed):
                    bad.append(f"{path.relative_to(REPO)} imports {name}")
    return bad


def test_runner_rooms_import_downward_and_only_the_cli_imports_reports() -> None:
    """The ladder never reaches the run store (nor the engine); the store never the engine; nothing below the CLI
    imports `reports`."""
    assert _room_violations() == []


def test_the_gateway_is_the_ladders_top_rung_and_its_transports_the_bottom() -> None:
    """No rung of the call ladder imports the gateway that calls it, and the online transports never the batch one
    (which implements their `Transport`): batching stays a transport under the gateway's rungs, not beside them."""
    ladder = {path.stem: _imports(path) for path in sorted((REPO / "runner/ladder").glob("*.py"))}
    bad = [f"runner/ladder/{stem}.py imports {name}" for stem, names in ladder.items() for name in sorted(names)
           if (stem != "gateway" and name.startswith("runner.ladder.gateway"))
           or (stem == "transports" and name.startswith("runner.ladder.batches"))]
    assert bad == []


def test_reports_read_runs_never_the_engine_or_the_cli() -> None:
    names = {name for path in (REPO / "reports").rglob("*.py") for name in _imports(path)}
    assert not {name for name in names if _room_of(name) in ("runner.engine", "runner.cli")}


def test_engine_cli_and_reports_never_name_a_benchmark() -> None:
    """Benchmarks plug in through the registry (commands, data, demo, report sections); only the registry's
    default names one."""
    offenders = [
        str(path.relative_to(REPO))
        for package in ("runner", "reports")
        for path in (REPO / package).rglob("*.py")
        if any(name in path.read_text(encoding="utf-8").lower() for name in BENCHMARK_NAMES)
    ]
    assert offenders == []


def test_a_benchmark_never_imports_another() -> None:
    for package in (REPO / "benchmarks").iterdir():
        if not (package / "__init__.py").is_file():
            continue
        others = {f"benchmarks.{other.name}" for other in (REPO / "benchmarks").iterdir()
                  if other.is_dir() and other.name != package.name}
        imported = {name for path in package.rglob("*.py") for name in _imports(path)}
        assert not {name for name in imported for other in others if name.startswith(other)}, package.name



def _modules(path: Path) -> set[str]:
    """`_imports`, with `from package import module` counted as `package.module` too."""
    found = _imports(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


CONTRACT = ("benchmarks.base", "benchmarks.reporting", "benchmarks.registry", "benchmarks.offline")
"""The modules of `benchmarks` that the engine, the CLI and the reports may import: the plugin contract."""


def test_runner_and_reports_see_benchmarks_only_through_the_contract() -> None:
    """A benchmark is found by the registry and driven through `base.Benchmark` and its parts, never imported."""
    bad = [f"{path.relative_to(REPO)} imports {name}" for package in ("runner", "reports")
           for path in sorted((REPO / package).rglob("*.py")) for name in _modules(path)
           if name.startswith("benchmarks.") and not name.startswith(CONTRACT)]
    assert bad == []


def test_a_benchmark_class_leaves_its_parts_unloaded() -> None:
    """The module declaring a benchmark imports none of its `Part`s (report, commands, demo): a run loads them only
    if it asks for them."""
    for path in sorted((REPO / "benchmarks").glob("*/benchmark.py")):
        parts = [target.partition(":")[0] for target in re.findall(r'Part\[\w+\]\("([\w.:]+)"\)', path.read_text())]
        assert parts, path
        assert not [name for name in _modules(path) for part in parts if name == part or name.startswith(part + ".")]


def test_importing_a_module_registers_nothing() -> None:
    """No call stands alone at a module's top level: plugins (a benchmark's offline answers, the `offline:` provider)
    are registered by the registry that loads them, never as a side effect of an import."""
    bad = [f"{path.relative_to(REPO)}:{node.lineno}" for package in OURS | {"errors"}
           for path in sorted((REPO / package).rglob("*.py"))
           for node in ast.parse(path.read_text(encoding="utf-8")).body
           if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    assert bad == []

def test_travelplanner_tools_and_evaluation_do_not_import_each_other_back() -> None:
    tools = {name for path in (REPO / "benchmarks/travelplanner/tools").rglob("*.py") for name in _imports(path)}
    assert not any(name.startswith("benchmarks.travelplanner.evaluation") for name in tools)


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from runner.ladder.gateway import Gateway\nimport sandbox_index\n")
    assert _imports(probe) == {"runner.ladder.gateway", "sandbox_index"}


BOTTOM = {"errors": set(), "datahome": {"errors"}}
"""Below every package, so any may import them: the user-facing errors; the data home, its places and downloader."""


def test_errors_and_the_data_home_are_the_bottom_layer_and_nothing_imports_the_engine_from_below() -> None:
    for package, allowed in BOTTOM.items():
        ours = (OURS | set(BOTTOM)) - {package} - allowed
        assert not {n for path in (REPO / package).rglob("*.py") for n in _imports(path) if n.split(".")[0] in ours}
    below = [path for package in ("providers", "cache", "sandbox_index", "benchmarks")
             for path in (REPO / package).rglob("*.py") if any(n.split(".")[0] == "runner" for n in _imports(path))]
    assert below == []


NEVER = {
    "runner/engine": ("sandbox_index",),  # TravelPlanner's database; the engine finds its files through `datahome`
    "benchmarks": ("runner.mock_server",),  # offline models shape replies with `providers.scripted_replies`
    "providers": ("runner.mock_server",),  # the providers talk to it over HTTP, as to the APIs it imitates
}
"""Folder -> packages no module in it imports, whatever the layers above allow."""


@pytest.mark.parametrize(("folder", "never"), NEVER.items())
def test_rooms_never_import_what_is_not_theirs(folder: str, never: tuple[str, ...]) -> None:
    names = {name for path in (REPO / folder).rglob("*.py") for name in _imports(path)}
    assert not {name for name in names for other in never if name == other or name.startswith(other + ".")}
