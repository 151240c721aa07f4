"""The plugin contract: `base.Benchmark` declares every part; parts load on first use, and only then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.base import Benchmark, Commands, Demo, Part
from benchmarks.registry import BUILTIN, get_benchmark
from benchmarks.reporting import ReportSections
from errors import UserError

REPO = Path(__file__).resolve().parents[2]
PROTOCOLS = {"commands": Commands, "demo": Demo, "report": ReportSections}


class Unplugged:
    """What a benchmark would be without the optional parts `Benchmark` declares."""

    name = "unplugged"


class BrokenReport(Benchmark):
    name = "broken"
    report = Part[ReportSections]("no_such_package.report")


def _members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_part_of_a_builtin_benchmark_implements_its_protocol(name: str) -> None:
    benchmark = get_benchmark(name)
    for attribute, protocol in PROTOCOLS.items():
        part = getattr(benchmark, attribute)
        assert part is not None, attribute
        assert [m for m in _members(protocol) if not callable(getattr(part, m, None))] == [], attribute


def test_an_object_without_the_contract_is_refused_with_the_way_out() -> None:
    with pytest.raises(UserError, match=r"does not provide the Benchmark interface \(subclass benchmarks.base"):
        get_benchmark(f"{__name__}:Unplugged")


def test_a_part_that_cannot_be_imported_says_which_part() -> None:
    with pytest.raises(UserError, match="BrokenReport.report: cannot import no_such_package.report"):
        _ = BrokenReport().report


PROBE = """
import sys
from benchmarks.registry import get_benchmark
benchmark = get_benchmark(sys.argv[1])
benchmark.strategies(benchmark.options_model())
print(" ".join(sorted(name for name in sys.modules if name.startswith("benchmarks.") or name == "matplotlib")))
"""


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_loading_a_benchmark_loads_none_of_its_parts_nor_another_benchmark(name: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, name], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = done.stdout.split()
    package = BUILTIN[name].split(".")[1]
    assert not [m for m in loaded if m.startswith("benchmarks.") and m.split(".")[1] not in
                (package, "base", "reporting", "registry", "offline")]
    parts = [part.target for part in (vars(type(get_benchmark(name)))[a] for a in PROTOCOLS)]
    assert parts and not set(parts) & set(loaded)
    assert "matplotlib" not in loaded
