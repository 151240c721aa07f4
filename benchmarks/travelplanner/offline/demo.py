"""TravelPlanner's share of `tripbench demo`: a generated world imported by the real importer, the two-stage agent
with `offline:oracle`, `offline:noisy` and the oracle behind the mock server (the real openai SDK over HTTP), and
the greedy baseline; afterwards, the noisy model's statuses are checked against the faults it injected."""

from __future__ import annotations

from pathlib import Path

from benchmarks.base import DemoRun
from benchmarks.offline import noisy_check
from benchmarks.reporting import RolloutView, RunView
from benchmarks.travelplanner.offline.models import NOISY, injected_fault
from benchmarks.travelplanner.offline.world import generate_world
from sandbox_index import build_travelplanner_index

PER_CELL = 1
"""Queries per (level, days) cell of the generated world: 9 cells."""
MOCK_PRICES = "{ input = 0.15, output = 0.6 }"
"""USD per million tokens for the model behind the mock server (a small hosted model's list price)."""


def demo_runs(out: Path, mock_url: str, *, seed: int) -> list[DemoRun]:
    world = generate_world(out / "worlds" / "travelplanner", seed=seed, per_cell=PER_CELL)
    index = world.root / "travelplanner.sqlite"
    build_travelplanner_index(world.database, index)
    models = [("oracle", "offline:oracle"), ("noisy", "offline:noisy"),
              ("oracle-via-mock-server", f"openai-compatible:oracle@{mock_url}")]
    return [DemoRun(name, _write_spec(out / f"{name}.toml", world.queries, index, strategies, run_models),
                    "pass_rates")
            for name, strategies, run_models in (("offline-models", ["two-stage"], models),
                                                 ("greedy", ["greedy"], [("no-llm", "offline:oracle")]))]


def _write_spec(path: Path, queries: Path, index: Path, strategies: list[str],
                models: list[tuple[str, str]]) -> Path:
    lines = ['benchmark = "travelplanner"', f'queries = "{queries.relative_to(path.parent)}"',
             f"strategies = {strategies!r}".replace("'", '"'), 'cache_dir = "cache"', "concurrency = 16",
             'evaluate = ["official"]', "", "[options]", f'index = "{index}"', ""]
    for name, model in models:
        lines += ["[[models]]", f'name = "{name}"', f'model = "{model}"']
        lines += [f"prices = {MOCK_PRICES}", ""] if model.startswith("openai-compatible:") else [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def demo_checks(run: RunView) -> list[str]:
    """The noisy model's statuses against the faults it injected into each query."""
    def expected(view: RolloutView) -> str:
        assert view.task is not None  # `noisy_check` asks only about rollouts with their task
        fault = injected_fault(view.task.input["query"], NOISY.default)
        return fault.expected_status if fault else "delivered"

    return noisy_check(run, expected, lambda view: view.status,
                       "rollouts ended with the status of the fault injected into them")
