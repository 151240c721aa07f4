"""Answers made outside tripbench stored as a run: `tripbench import-plans FILES --benchmark NAME --run-dir DIR`.

The benchmark reads the files (its `plan_files` part, `benchmarks.base.PlanFiles`) into answers with a task, model,
strategy and sample; they are stored as rollouts without LLM calls (a delivered plan, or the failure the source
recorded), in a run directory like any other: a session whose spec names the split, the models (provider
`imported:`, which no run can call, so `tripbench run` on it is refused), the strategies and the evaluator modes;
the split's tasks; then the stored rollouts are scored, and the submission and trajectory files written. So
`tripbench report DIR` reports them as a run, tier and step tables included. Queries of the split without an
answer in the files have no rollout (not delivered), and the import says how many per model and strategy.

Importing into the same directory again replaces the rollouts of the same keys and adds the others; the settings
that change results (split, options) must match the earlier import, as for a resumed run.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchmarks.base import Benchmark, ImportedPlans
from datahome.input_files import distinct_inputs
from errors import UsageError
from errors.validation import config_error
from runner.engine.execute import evaluate_stored, planned_counts
from runner.engine.spec import MAX_SAMPLES, RunSpec, parse_options
from runner.store.outputs import write_outputs
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.results import load_run
from runner.store.writer import ResultsStore

PROVIDER = "imported"
"""The provider of an imported run's models: answers read from files, never a model to call."""


@dataclass(slots=True)
class ImportReport:
    """What an import stored."""

    run_dir: Path
    split: str
    stored: int
    """Rollouts stored (delivered plans and recorded failures)."""
    tasks: int
    """Queries of the split."""
    groups: dict[tuple[str, str], int] = field(default_factory=dict)
    """(model, strategy) -> rollouts stored."""
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def imported_spec(benchmark: str, imported: ImportedPlans, options: dict[str, Any], modes: Sequence[str]) -> RunSpec:
    """The spec an imported run records: what its report reads (models, strategies, samples, evaluator modes).

    Raises:
        UsageError: more answers to one query than a run holds samples (`spec.MAX_SAMPLES`), or labels no run spec
            takes (the spec's own message).
    """
    models = sorted({plan.model for plan in imported.plans})
    strategies = sorted({plan.strategy for plan in imported.plans})
    samples = 1 + max(plan.sample for plan in imported.plans)
    if samples > MAX_SAMPLES:
        answers = Counter((plan.task, plan.model, plan.strategy) for plan in imported.plans)
        (task, model, strategy), count = answers.most_common(1)[0]
        raise UsageError(f"{count} answers to query {task} ({model} / {strategy}): a run holds at most {MAX_SAMPLES} "
                         "samples of a query (each further answer to it is the next sample); nothing imported")
    try:
        return RunSpec.model_validate({
            "benchmark": benchmark, "split": imported.split, "strategies": strategies, "samples": samples,
            "models": [{"model": f"{PROVIDER}:{model}", "name": model} for model in models],
            "evaluate": list(modes), "options": options})
    except ValidationError as exc:
        raise config_error(exc, RunSpec, "the imported answers") from None


async def import_plans(benchmark: Benchmark, paths: Sequence[Path], run_dir: Path, *, options: dict[str, Any],
                       modes: Sequence[str], model: str | None = None, strategy: str | None = None,
                       split: str | None = None) -> ImportReport:
    """Reads `paths` with the benchmark's `plan_files` part and stores them in `run_dir` as a scored run.

    Raises:
        UsageError: the benchmark cannot read plan files, an unknown evaluator mode, a bad option, a file given
            twice (`datahome.input_files.distinct_inputs`), no answer at all, too many answers to one query, or a
            run directory holding a run of other settings.
        DataError: a file that cannot be read (from the benchmark).
    """
    if benchmark.plan_files is None:
        raise UsageError(f"benchmark {benchmark.name} cannot import plans made elsewhere")
    for mode in modes:
        if mode not in benchmark.modes:
            raise UsageError(f"benchmark {benchmark.name} has no evaluator mode {mode!r} "
                             f"(expected {', '.join(benchmark.modes)})")
    distinct_inputs(paths)
    parsed = parse_options(benchmark.options_model, options, "--option")
    imported = benchmark.plan_files.read_plans(paths, parsed, model=model, strategy=strategy, split=split)
    if not imported.plans:
        why = "".join(f"\n  {line}" for line in imported.skipped[:5])
        raise UsageError(f"no answer to import from {', '.join(str(path) for path in paths)}{why}")
    spec = imported_spec(benchmark.name, imported, options, modes)
    tasks = list(benchmark.load_tasks(imported.split, parsed))
    keys = [RolloutKey(benchmark.name, imported.split, plan.task, plan.model, plan.strategy, plan.sample)
            for plan in imported.plans]
    report = ImportReport(run_dir, imported.split, len(keys), len(tasks), skipped=imported.skipped)
    for key in keys:
        pair = (key.model, key.strategy)
        report.groups[pair] = report.groups.get(pair, 0) + 1
    store = await ResultsStore.open(run_dir)
    try:
        previous = await store.last_spec()
        if previous is not None and _settings(previous) != _settings(spec.public_dump()):
            raise UsageError(f"{run_dir} holds a run of other settings (benchmark, split or options): import into "
                             "another --run-dir")
        session = await store.start_session(spec.public_dump(), ", ".join(str(path) for path in paths),
                                            version("tripbench"), planned_counts(keys))
        await store.save_tasks(benchmark.name, imported.split, tasks)
        now = time.time()
        for key, result in zip(keys, imported.results(), strict=True):  # one plan in memory at a time
            await store.save_rollout(RolloutRecord(key, result, started_at=now, finished_at=now), session)
        report.notes += await evaluate_stored(benchmark, parsed, modes, tasks, imported.split, store, run_dir)
        await store.end_session(session, "completed")
    finally:
        await store.close()
    with load_run(run_dir, plans=False) as results:
        write_outputs(results, benchmark, tasks, imported.split, spec.samples)  # its notes: `missing` below
    for model_label, strategy_name in sorted(report.groups):
        answered = {key.task for key in keys if (key.model, key.strategy) == (model_label, strategy_name)}
        if missing := sum(task.id not in answered for task in tasks):
            report.notes.append(f"{model_label} / {strategy_name}: {missing} of {len(tasks)} queries of split "
                                f"{imported.split} have no answer in the files (no rollout: not delivered)")
    return report


def _settings(spec: dict[str, Any]) -> tuple[Any, ...]:
    return spec.get("benchmark"), spec.get("split"), spec.get("options")
