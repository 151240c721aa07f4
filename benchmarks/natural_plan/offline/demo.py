"""Natural Plan's share of `tripbench demo`: a generated world of the three tasks, answered by `offline:oracle`,
`offline:noisy` and the oracle behind the mock server; afterwards, the noisy model's mistakes are checked against
the error kinds the scoring found."""

from __future__ import annotations

from pathlib import Path

from benchmarks.base import DemoRun
from benchmarks.natural_plan.offline.models import NOISY, injected_mistake
from benchmarks.natural_plan.offline.world import generate_world
from benchmarks.natural_plan.report import error_kind
from benchmarks.offline import noisy_check
from benchmarks.reporting import RolloutView, RunView

PER_TASK = 6
MOCK_PRICES = "{ input = 0.15, output = 0.6 }"


def demo_runs(out: Path, mock_url: str, *, seed: int) -> list[DemoRun]:
    world = generate_world(out / "worlds" / "natural-plan", seed=seed, per_task=PER_TASK)
    spec = out / "natural-plan.toml"
    spec.write_text("\n".join([
        'benchmark = "natural-plan"', 'split = "all"', 'strategies = ["direct"]', 'cache_dir = "cache"',
        "concurrency = 16", 'evaluate = ["official"]', "", "[options]",
        f'data_dir = "{world.folder}"', "",
        "[[models]]", 'name = "oracle"', 'model = "offline:oracle"', "",
        "[[models]]", 'name = "noisy"', 'model = "offline:noisy"', "",
        "[[models]]", 'name = "oracle-via-mock-server"', f'model = "openai-compatible:oracle@{mock_url}"',
        f"prices = {MOCK_PRICES}", ""]), encoding="utf-8")
    return [DemoRun("natural-plan", spec, "np_accuracy")]


def demo_checks(run: RunView) -> list[str]:
    """The noisy model's failures against the mistakes it built into its answers."""
    def expected(view: RolloutView) -> str:
        assert view.task is not None  # `noisy_check` asks only about rollouts with their task
        return injected_mistake(view.task.input, NOISY.default) or "solved"

    return noisy_check(run, expected, lambda view: error_kind(view) or "solved",
                       "Natural Plan answers scored as built: the mistake put into them, or solved")
