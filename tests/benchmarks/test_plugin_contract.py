"""The plugin contract: `base.Benchmark` declares every part; parts load on first use, and only then; the offline models
answer for any benchmark that has an `offline` part, plugins included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.base import DELIVERED, Benchmark, Commands, Demo, OfflineAnswers, Part, Responder
from benchmarks.registry import BUILTIN, get_benchmark
from benchmarks.reporting import ReportSections
from errors import UserError
from runner.store.results import load_run
from tests.runner.engine_support import TOY, run_cli
from tests.runner.toy_benchmark import ToyBenchmark

REPO = Path(__file__).resolve().parents[2]
PROTOCOLS = {"commands": Commands, "demo": Demo, "report": ReportSections, "offline": OfflineAnswers}


class Unplugged:
    """What a benchmark would be without the optional parts `Benchmark` declares."""

    name = "unplugged"


class BrokenReport(ToyBenchmark):
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
    assert isinstance(benchmark.offline.responder([], None), Responder)


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
    """Nor the offline models (and the mock server's code they share) while no offline model is used."""
    done = subprocess.run([sys.executable, "-c", PROBE, name], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = done.stdout.split()
    package = BUILTIN[name].split(".")[1]
    assert not [m for m in loaded if m.startswith("benchmarks.") and m.split(".")[1] not in
                (package, "base", "tasks", "reporting", "registry", "jsonl")]  # jsonl: the shared readers
    declared = vars(type(get_benchmark(name)))
    parts = [declared[attribute].target.partition(":")[0] for attribute in PROTOCOLS]
    assert parts and not set(parts) & set(loaded)
    assert "matplotlib" not in loaded


def _check_oracle(model: str) -> None:
    if model != "oracle":
        raise UserError(f"offline:{model}: the toy answers as offline:oracle only")


def _toy_reply(model: str, prompt: str) -> str | None:
    return f"toy says {prompt}" if prompt.startswith("task ") else None


class ToyAnswers:
    """The toy's offline part: the same answers whatever the tasks."""

    def responder(self, tasks: Any, options: Any) -> Responder:
        return Responder(_check_oracle, _toy_reply)


TOY_ANSWERS = ToyAnswers()


class OfflineToy(ToyBenchmark):
    """The toy benchmark with offline answers of its own."""

    offline = Part[OfflineAnswers](f"{__name__}:TOY_ANSWERS")


SPEC = """benchmark = "{benchmark}"
split = "train"
strategies = ["scripted"]

[options]
tasks = 3
max_calls = 2

[[models]]
model = "offline:oracle"
"""


def test_a_plugin_benchmark_with_offline_answers_runs_on_offline_oracle(tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(SPEC.format(benchmark=f"{__name__}:OfflineToy"), encoding="utf-8")
    done = run_cli("run", str(tmp_path / "spec.toml"), "--run-dir", str(tmp_path / "run"), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    with load_run(tmp_path / "run") as results:
        assert [r.status for r in results.rollouts] == [DELIVERED] * 3
        replies = [step["reply"] for r in results.rollouts for step in results.steps(r.id)]
    assert replies and all(reply.startswith("toy says task ") for reply in replies)


def test_offline_oracle_for_a_benchmark_without_offline_answers_says_so(tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(SPEC.format(benchmark=TOY), encoding="utf-8")
    done = run_cli("run", str(tmp_path / "spec.toml"), "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "offline:oracle: no offline models here (benchmarks: toy;" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "run").exists()


class Incomplete(Benchmark):
    """A plugin that forgot most of the contract: no name, no tasks, no evaluator."""

    options_model = ToyBenchmark.options_model
    statuses: dict[str, str] = {}

    def strategies(self, options: Any) -> list[Any]:
        return []

    def open_tools(self, options: Any) -> None:
        return None


class Unnamed(ToyBenchmark):
    """The toy with its name taken away, as a plugin that sets it nowhere."""

    @property
    def name(self) -> str:  # type: ignore[override]
        raise AttributeError("name")


def test_a_subclass_missing_required_methods_is_refused_naming_them(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"Incomplete does not define evaluate, load_tasks, submission$"):
        get_benchmark(f"{__name__}:Incomplete")
    (tmp_path / "spec.toml").write_text(SPEC.format(benchmark=f"{__name__}:Incomplete"), encoding="utf-8")
    done = run_cli("run", str(tmp_path / "spec.toml"), "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "does not define evaluate, load_tasks, submission" in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_subclass_without_a_name_is_refused_naming_it() -> None:
    with pytest.raises(UserError, match=r"Unnamed does not define name$"):
        get_benchmark(f"{__name__}:Unnamed")


def half_a_report() -> None:
    """The one ReportSections function this module has."""


class HalfReport(ToyBenchmark):
    report = Part[ReportSections](__name__)  # this module: it has none of ReportSections' functions
    offline = Part[OfflineAnswers](f"{__name__}:half_a_report")  # a function where an OfflineAnswers belongs


def test_a_part_lacking_its_protocols_members_says_which() -> None:
    benchmark = HalfReport()
    with pytest.raises(UserError, match=r"HalfReport.report \(tests.benchmarks.test_plugin_contract\) lacks "
                                        r"group_rates, report_sections, rollout_category, rollout_metrics of "
                                        r"benchmarks.reporting.ReportSections"):
        _ = benchmark.report
    with pytest.raises(UserError, match=r"HalfReport.offline \(.*:half_a_report\) lacks responder of "
                                        r"benchmarks.base.OfflineAnswers"):
        _ = benchmark.offline
