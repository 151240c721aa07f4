"""Benchmarks by name, imported only when asked for (a run of one benchmark never loads the others).

A name is either a built-in (`travelplanner`), a benchmark an installed package declares in the
`tripbench.benchmarks` entry-point group, or a `module:attribute` import path (`mypkg.bench:MyBenchmark`), which
is how a project or a test plugs in its own benchmark without installing anything. The attribute may be a
`Benchmark` instance or a class that builds one with no arguments; a subclass of `Benchmark` keeps its parts unloaded
until they are asked for.

Loading a benchmark also serves the offline models (`offline:oracle`, `offline:noisy`, `benchmarks.offline`), which
answer as the `offline` parts of the benchmarks loaded so far: in a run, its own benchmark's only.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import cast

from benchmarks.base import REQUIRED_ATTRIBUTES, Benchmark, import_target
from errors import UsageError, UserError
from providers.interface import ChatModel
from providers.prices import register_free_provider
from providers.registry import register_provider

BUILTIN: dict[str, str] = {
    "travelplanner": "benchmarks.travelplanner.benchmark:TravelPlannerBenchmark",
    "natural-plan": "benchmarks.natural_plan.benchmark:NaturalPlanBenchmark",
    "traveleval": "benchmarks.traveleval.benchmark:TravelEvalBenchmark",
}
DEFAULT = "travelplanner"
"""The benchmark commands use when `--benchmark` is not given."""
ENTRY_POINT_GROUP = "tripbench.benchmarks"
OFFLINE = "offline"
"""The provider prefix of the offline models."""

_loaded: dict[str, Benchmark] = {}


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
    """Returns the benchmark called `name`, importing its module now (not its parts), and serves the offline models
with its `offline` part too.

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
    loaded = cast(Benchmark, benchmark)
    _loaded.setdefault(loaded.name, loaded)
    register_provider(OFFLINE, _offline_model)
    register_free_provider(OFFLINE)
    return loaded


def load_all() -> None:
    """Loads every built-in and installed benchmark: what a process that may meet any benchmark's offline models needs
    (a mock server of its own, `tripbench cache explain`)."""
    for name in available():
        get_benchmark(name)


def loaded_benchmarks() -> list[Benchmark]:
    """The benchmarks `get_benchmark` loaded in this process, in the order they were first loaded."""
    return list(_loaded.values())


def _offline_model(name: str) -> ChatModel:
    from benchmarks.offline import OfflineModel  # with the mock server's reply code: only once an offline model is used

    return OfflineModel(name)
