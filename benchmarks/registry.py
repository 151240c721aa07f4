"""Benchmarks by name, imported only when asked for (a run of one benchmark never loads the others).

A name is either a built-in (`travelplanner`), a benchmark an installed package declares in the
`tripbench.benchmarks` entry-point group, or a `module:attribute` import path (`mypkg.bench:MyBenchmark`), which
is how a project or a test plugs in its own benchmark without installing anything. The attribute may be a
`Benchmark` instance or a class that builds one with no arguments; a subclass of `Benchmark` keeps its parts unloaded
until they are asked for.

Looking a benchmark up has no other effect: what a run needs of it (its tasks, its offline models) is built where the
run is prepared (`runner.engine.prepared.prepare`).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import cast

from benchmarks.base import REQUIRED_ATTRIBUTES, Benchmark, import_target
from errors import UsageError, UserError

BUILTIN: dict[str, str] = {
    "travelplanner": "benchmarks.travelplanner.benchmark:TravelPlannerBenchmark",
    "natural-plan": "benchmarks.natural_plan.benchmark:NaturalPlanBenchmark",
    "traveleval": "benchmarks.traveleval.benchmark:TravelEvalBenchmark",
}
DEFAULT = "travelplanner"
"""The benchmark commands use when `--benchmark` is not given."""
ENTRY_POINT_GROUP = "tripbench.benchmarks"


def available() -> list[str]:
    """Names `get_benchmark` accepts without an import path: built-ins and installed plugins, sorted."""
    return sorted({*BUILTIN, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))})


def _target(name: str) -> str:
    if name in BUILTIN:
        return BUILTIN[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.value
    if ":" in name:
        return name
    raise UsageError(f"unknown benchmark {name!r}: expected one of {', '.join(available())} or a module:attribute path")


def get_benchmark(name: str) -> Benchmark:
    """Returns the benchmark called `name`, importing its module now (not its parts).

    Args:
        name: A built-in or entry-point name, or a `module:attribute` import path.

    Raises:
        errors.UserError: no such benchmark, or its module cannot be imported.
    """
    target = _target(name)
    found = import_target(target, f"benchmark {name!r}")
    if isinstance(found, type) and (abstract := getattr(found, "__abstractmethods__", None)):
        raise UserError(f"benchmark {name!r}: {target} does not define {', '.join(sorted(abstract))}")
    benchmark: object = found() if isinstance(found, type) else found
    # a subclass is one by declaration; the structural check reads every member (loading parts), so others only
    if Benchmark in type(benchmark).__mro__:
        if missing := [member for member in REQUIRED_ATTRIBUTES if not hasattr(benchmark, member)]:
            raise UserError(f"benchmark {name!r}: {target} does not define {', '.join(missing)}")
    elif not isinstance(benchmark, Benchmark):
        raise UserError(f"benchmark {name!r}: {target} does not provide the Benchmark interface (subclass "
                        "benchmarks.base.Benchmark for the defaults of its optional parts)")
    return cast(Benchmark, benchmark)
