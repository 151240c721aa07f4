"""`tripbench list`: every benchmark's strategies with what each does, and the priced models, at 80 columns."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from pydantic import BaseModel

from benchmarks.registry import available, get_benchmark
from providers.prices import bundled_table
from runner.cli.main import cli
from tests.runner.engine_support import CLI, PROJECT_ROOT
from tests.runner.toy_benchmark import ToyBenchmark


def test_list_names_every_strategy_and_priced_model_and_tells_react_from_two_stage() -> None:
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    for name in available():
        benchmark = get_benchmark(name)
        for strategy in benchmark.strategies(benchmark.options_model()):
            assert any(line.split()[:1] == [strategy.name] and len(line.split()) > 1 for line in lines), strategy.name
    described = {line.split()[0]: line for line in lines if line.startswith("  ")}
    assert "tool agent" in described["two-stage"] and "sole planning (no tools)" in described["react"]
    assert f"priced models: {len(bundled_table().models):,} of " in result.output


class Undescribed:
    """A plugin strategy without the `description` the contract asks for."""

    name = "terse"


class TerseToy(ToyBenchmark):
    def strategies(self, options: BaseModel) -> Sequence[Any]:
        return [Undescribed()]


def _installed_plugins(site: Path, plugins: dict[str, str]) -> None:
    """A distribution declaring `plugins` (name -> import path) in the `tripbench.benchmarks` entry points, found on
    PYTHONPATH as an installed package would be."""
    info = site / "toy_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugins\nVersion: 1.0\n", encoding="utf-8")
    lines = "".join(f"{name} = {target}\n" for name, target in plugins.items())
    (info / "entry_points.txt").write_text(f"[tripbench.benchmarks]\n{lines}", encoding="utf-8")


def test_list_shows_installed_plugins_a_broken_one_and_a_terse_one_included(tmp_path: Path) -> None:
    _installed_plugins(tmp_path, {"terse": f"{__name__}:TerseToy", "gone": "no_such_plugin:Benchmark"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(PROJECT_ROOT)))}
    done = subprocess.run([*CLI, "list"], capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "benchmark gone: cannot be loaded: benchmark 'gone': cannot import no_such_plugin" in done.stdout
    assert "    terse  (no description)" in done.stdout
    assert "benchmark travelplanner" in done.stdout and "models that need no key" in done.stdout
