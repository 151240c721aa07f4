"""A prepared run: the spec read and checked, its benchmark, tasks, strategies and offline models loaded, its rollout
keys expanded, with no I/O on the run directory and nothing spent (`prepare`); what every way of running it starts
from (`runner.engine.session`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks.base import Benchmark, Strategy, Task
from benchmarks.offline import OfflineModels, is_offline, offline_models
from benchmarks.registry import get_benchmark
from datahome import default_cache_dir
from errors import ConfigError
from providers.interface import ChatModel
from providers.prices import PriceTable, load_price_table
from providers.registry import ProviderOptions, ProviderRegistry
from runner.engine.expand import check_size, expand, select_tasks, split_name
from runner.engine.shard import Shard
from runner.engine.spec import ModelSpec, RunSpec, batch_models, load_spec, parse_options, with_overrides
from runner.store.records import RolloutKey
from runner.store.shards import find_shards
from runner.store.writer import LOCK_FILE, RESULTS_FILE


@dataclass(slots=True)
class Prepared:
    """A validated spec with everything loaded that does not touch the run directory or spend money."""

    spec: RunSpec
    spec_path: Path
    benchmark: Benchmark
    options: BaseModel
    tasks: list[Task]
    strategies: dict[str, Strategy]
    keys: list[RolloutKey]
    cache_dir: Path
    batched: Mapping[str, str | None]
    """The model strings whose calls go through their provider's batch API (checked able to: `batch_models`), each
    with the only stage of calls it batches (None: every call)."""
    offline: OfflineModels
    """The run's offline models (`offline:oracle`, ...): its benchmark's answers to the prompts of its tasks."""
    providers: ProviderRegistry
    """What resolves the run's other model strings: the built-in providers, plus any its caller passed `prepare`."""
    prices: PriceTable
    """The price table the run prices its calls at, loaded once here (the data home's, else the bundled snapshot)."""
    shard: Shard | None = None
    """The shard of the run this process runs (`keys` holds its share), None for the whole run."""
    replay_of: str | None = None
    """The sha256 of the pack this run replays (`tripbench replay`), stamped into its provenance."""

    @property
    def split(self) -> str:
        return split_name(self.spec)

    def model(self, label: str) -> ModelSpec:
        return next(m for m in self.spec.models if m.label == label)

    def resolve(self, model: str, options: ProviderOptions) -> ChatModel:
        """The provider of one of the run's model strings: its offline models' (`offline:…`), else its providers'
        built with `options`."""
        return self.offline.resolve(model) if is_offline(model) else self.providers.resolve(model, options)


def default_run_dir(spec_path: Path) -> Path:
    """The spec's own folder when that is a run directory (`RUN_DIR/spec.toml`, say; a sharded run's folder too),
    else `runs/<spec name>` beside the spec file."""
    folder = spec_path.parent
    if any((folder / name).is_file() for name in (RESULTS_FILE, LOCK_FILE)) or find_shards(folder) is not None:
        return folder
    return spec_path.parent / "runs" / spec_path.stem


def prepare(spec_path: Path, *, overrides: Mapping[str, Any] | None = None, spec: RunSpec | None = None,
            shard: Shard | None = None, providers: ProviderRegistry | None = None,
            prices: PriceTable | None = None) -> Prepared:
    """Reads the spec (with command-line overrides), loads the benchmark, its tasks and strategies, expands the keys.

    Args:
        spec_path: The spec file.
        overrides: Spec settings the command line replaces (`max_cost`, `limit`), validated as the spec's own.
        spec: The spec `spec_path` is about to hold (one made from command-line flags): checked before anything is
            written.
        shard: Only this shard's rollouts (`runner.engine.shard`).
        providers: Resolves the spec's model strings (default: the built-in providers); a measurement passes one
            with a stand-in provider of its own (`perf/engine_throughput.py`).
        prices: The price table (default: the data home's, `providers.prices.load_price_table`).

    Raises:
        ConfigError: a bad spec or a strategy the benchmark does not have.
        UserError: an unknown benchmark, missing data (DataError) and the like.
    """
    source = str(spec_path)
    prices = prices if prices is not None else load_price_table()
    spec = with_overrides(spec if spec is not None else load_spec(spec_path, prices), overrides or {},
                          "the command line", prices)
    folder = spec_path.absolute().parent  # relative paths in a spec are relative to its file, printed resolved
    benchmark = get_benchmark(spec.benchmark)
    options = parse_options(benchmark.options_model, spec.options, source, relative_to=folder)
    if identity := benchmark.identity(options):  # stored with the spec, so resuming compares them (check_resume)
        spec = spec.model_copy(update={"options": {**spec.options, **identity}})
    splits = benchmark.splits  # checked here, once for all benchmarks
    if spec.split is not None and splits and spec.split not in splits:
        raise ConfigError(source, "split", f"one of {', '.join(splits)} (or queries = FILE)", spec.split)
    providers = providers or ProviderRegistry()
    for model in spec.models:  # a misspelt provider fails before the run directory is touched
        if not is_offline(model.model):
            providers.check(model.model)
    batched = batch_models(spec, source)
    if spec.team is not None:  # before the run directory is touched: no team, no run
        require_team_client(source)
        from runner.team import team_url

        team_url(spec.team.url_env, source)
    offered = {strategy.name: strategy for strategy in benchmark.strategies(options)}
    for position, name in enumerate(spec.strategies):
        if name not in offered:
            raise ConfigError(source, f"strategies[{position}]", f"one of {', '.join(sorted(offered))}", name)
    _require_prices(spec, benchmark.extra_models(options), source, prices)
    split: str | Path = spec.split if spec.split is not None else folder / (spec.queries or "")
    tasks = select_tasks(spec, benchmark.load_tasks(split, options), source)
    # the offline models, when the run calls any (their module loads then only), checked as the providers above
    called = [*(model.model for model in spec.models), *benchmark.extra_models(options)]
    offline = offline_models(benchmark, tasks, options) if any(map(is_offline, called)) else OfflineModels()
    for string in filter(is_offline, called):
        offline.resolve(string)
    cache_dir = folder / spec.cache_dir if spec.cache_dir else default_cache_dir()
    check_size(spec, len(tasks), source)
    keys = expand(spec, tasks, benchmark.name)
    if shard is not None:
        keys = shard.select(keys)
    return Prepared(spec, spec_path, benchmark, options, list(tasks), offered, keys, cache_dir, batched, offline,
                     providers, prices, shard)


def _require_prices(spec: RunSpec, extra: Sequence[str], source: str, table: PriceTable) -> None:
    """With a spend cap, every model the run calls (those under test, the benchmark's `extra`) needs a price, checked
    before anything is written or spent (the one place of the rule: every capped session is built from a prepared
    run, `runner.engine.session`).

    Raises:
        ConfigError: a model without a price in the table or the spec.
    """
    if spec.max_cost is None:
        return
    for position, model in enumerate(spec.models):
        if table.price_for(model.model, {model.model: model.prices} if model.prices else None) is None:
            near = table.nearest(model.model)
            raise ConfigError(source, f"models[{position}].prices", "a price table (input, output USD per "
                              "million tokens) or a price table entry (\"PROVIDER:NAME\"): max_cost is set and "
                              f"the price table does not know {model.model}"
                              + (f" (did you mean {near}?)" if near else ""))
    prices = {model.model: model.prices for model in spec.models if model.prices}
    for model_string in extra:
        if table.price_for(model_string, prices) is None:
            raise ConfigError(source, "options", f"a model with a known price: max_cost is set and the benchmark "
                              f"also calls {model_string}, which the price table does not know")


def require_team_client(source: str) -> None:
    """Raises `ConfigError` when `[team]` is set and PostgreSQL's client (the `team` extra) is not installed."""
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError(source, "team", "PostgreSQL's client installed: pip install 'tripbench[team]'")


def extra_models(prepared: Prepared) -> list[str]:
    """Models the benchmark's strategies call besides those under test (`Benchmark.extra_models`)."""
    return list(prepared.benchmark.extra_models(prepared.options))
