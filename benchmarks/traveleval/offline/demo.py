"""TravelEval's share of `tripbench demo`: a generated world (`world.py`), the `direct` and `react` strategies with
`offline:oracle`, `offline:noisy` and the oracle behind the mock server (the real openai SDK over HTTP), and the
progressive group with the two offline models; afterwards, each mistake of the noisy model is checked against the
metric it should move (`mistakes.MISTAKES`), and every plan without one against all of them."""

from __future__ import annotations

from pathlib import Path

from benchmarks.base import DemoRun
from benchmarks.offline import noisy_check
from benchmarks.reporting import RolloutView, RunView
from benchmarks.traveleval.offline.mistakes import NOISY, found_mistakes, injected_mistake
from benchmarks.traveleval.offline.world import generate_world

MOCK_PRICES = "{ input = 0.15, output = 0.6 }"
"""USD per million tokens for the model behind the mock server (a small hosted model's list price)."""
HEADLINE = "te_constraint"
CLEAN = "no mistake"


def demo_runs(out: Path, mock_url: str, *, seed: int) -> list[DemoRun]:
    world = generate_world(out / "worlds" / "traveleval", seed=seed)
    models = [("oracle", "offline:oracle"), ("noisy", "offline:noisy"),
              ("oracle-via-mock-server", f"openai-compatible:oracle@{mock_url}")]
    runs = (("traveleval", "all", ["direct", "react"], models),
            ("traveleval-progressive", "progressive", ["direct"], models[:2]))
    specs: list[DemoRun] = []
    for name, split, strategies, run_models in runs:
        lines = ['benchmark = "traveleval"', f'split = "{split}"',
                 f"strategies = {strategies!r}".replace("'", '"'), 'cache_dir = "cache"', "concurrency = 16",
                 'evaluate = ["official"]', "", "[options]", f'data_dir = "{world.folder}"', 'distance = "offline"', ""]
        for label, model in run_models:
            lines += ["[[models]]", f'name = "{label}"', f'model = "{model}"']
            lines += [f"prices = {MOCK_PRICES}", ""] if model.startswith("openai-compatible:") else [""]
        spec = out / f"{name}.toml"
        spec.write_text("\n".join(lines), encoding="utf-8")
        specs.append(DemoRun(name, spec, HEADLINE))
    return specs


def expected(view: RolloutView) -> str:
    """The mistake the noisy model built into this rollout's plan (`CLEAN`: none)."""
    assert view.task is not None  # `noisy_check` asks only about rollouts with their task
    mistake = injected_mistake(view.task.input, NOISY.default)
    return mistake.name if mistake else CLEAN


def found(view: RolloutView) -> str:
    """The mistakes the evaluation's metrics show (`CLEAN`: none), or why there is no evaluation."""
    details = view.evaluation.details if view.evaluation is not None else {}
    metrics = details.get("metrics")
    if not isinstance(metrics, dict):
        return str(details.get("error") or view.status)
    return " + ".join(found_mistakes(metrics)) or CLEAN


def demo_checks(run: RunView) -> list[str]:
    """The noisy model's plans scored as built: the metric each mistake aims at moved, and only that one."""
    return noisy_check(run, expected, found,
                       "TravelEval plans scored as built: each mistake moved its metric and only it, or none moved")
