"""`tripbench list`: every benchmark's strategies with what each does, and the priced models, at 80 columns."""

from __future__ import annotations

from click.testing import CliRunner

from benchmarks.registry import available, get_benchmark
from providers.prices import price_table
from runner.cli.main import cli


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
    assert f"priced models: {len(price_table().models):,} of " in result.output
