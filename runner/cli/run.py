"""`tripbench run SPEC.toml` (run or resume a run spec) and `tripbench status RUN_DIR` (how far a run got)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import importlib.util
import json
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import click
import orjson
from rich.console import Console

from benchmarks.base import BUDGET_EXHAUSTED, ExpectedCalls
from benchmarks.offline import MODELS as KEYLESS
from benchmarks.registry import DEFAULT, get_benchmark
from cache.modes import CacheMode
from errors import ConfigError, UserError
from providers.prices import PriceTable, load_price_table
from runner.cli.console import output_console
from runner.cli.run_folder import SPEC_FILE, keep_spec, spec_of_folder
from runner.cli.team import local_cache_hint
from runner.engine.dryrun import estimate, render_estimate, render_settings, spent_before
from runner.engine.execute import FAILED, RunReport, Spread, execute
from runner.engine.gc_tuning import tune_for_a_run
from runner.engine.preflight import preflight
from runner.engine.prepared import Prepared, default_run_dir, prepare
from runner.engine.replay_processes import replay_workers
from runner.engine.scheduler import BUDGET, COMPLETED, INTERRUPTED
from runner.engine.shard import Shard, check_run_dir, parse_shard
from runner.engine.spec import RunSpec, load_spec, parse_options, parse_spec
from runner.store.results import load_run
from runner.store.shards import SHARD_DIR
from runner.store.summary import render_summary, summarize, summary_json, without_result
from runner.store.writer import RESULTS_FILE, lock_run_dir

EXIT_FAILED = 1
EXIT_BUDGET = 3
EXIT_NO_RESULT = 4
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""Exit codes: 0 every rollout has a result of its own; {EXIT_FAILED} the run failed (a bad key, a
damaged file, a path that cannot be used: the message says which); 2 a usage or spec error; {EXIT_BUDGET} the spend
cap stopped it; {EXIT_NO_RESULT} it completed but some rollouts have no result of their own (an unavailable
provider's errors, replay-mode misses and spend-cap cuts, which the same command runs again; strategy crashes);
{EXIT_INTERRUPTED} interrupted (Ctrl-C, SIGTERM).

Models that need no key: """ + "; ".join(f"{model}: {does}" for model, does in KEYLESS.items()) + """.

The benchmarks' strategies (two-stage is the tool agent; react is a sole-planning strategy) and the models with a
price: `tripbench list`."""
FLAGS = "the command-line flags"
"""What errors in a spec made from flags name as its source."""
IDENTITY = ("benchmark", "split", "models", "strategies", "samples", "options")
"""What makes a flag run the same run as the one whose spec is in the folder (the cap may change on resume; the tasks
a limit gives are the run's identity: `runner.engine.identity`)."""


def spec_from_flags(benchmark: str, models: tuple[str, ...], strategies: str | None, split: str | None,
                    shape: dict[str, Any]) -> dict[str, Any]:
    """The run spec the command-line flags describe; `shape` holds the other flags given (limit, max_cost, ...).
    Strategies that call no model (`greedy`, `rule-based`) need no --model: their rows say `no model`."""
    names = [name.strip() for name in strategies.split(",") if name.strip()] if strategies else []
    no_model = not models and bool(names) and _model_free(benchmark, names, shape.get("options") or {})
    if (not models and not no_model) or not strategies or not split:
        missing = [flag for flag, value in (("--model", models), ("--strategies", strategies), ("--split", split))
                   if not value]
        raise click.UsageError(f"without a SPEC file, {', '.join(missing)} must be given "
                               "(e.g. --model openai:gpt-4o-mini --strategies direct,cot --split validation)")
    given = {name: value for name, value in shape.items() if value not in (None, {})}
    return {"benchmark": benchmark, "split": split, "strategies": names, **given,
            "models": [NO_MODEL] if no_model else [{"model": model} for model in models]}


NO_MODEL = {"name": "no model", "model": "offline:oracle"}
"""The model of a flag run whose strategies call none: a keyless one, never asked, under a label that says so."""


def _model_free(benchmark: str, names: list[str], options: dict[str, Any]) -> bool:
    """Whether every strategy named makes no LLM call (`expected_calls` 0: greedy, the rule-based planners)."""
    try:
        found = get_benchmark(benchmark)
        offered = {s.name: s for s in found.strategies(found.options_model.model_validate(options))}
    except (UserError, ValueError):  # said properly where the spec is checked
        return False
    return all(isinstance(s := offered.get(name), ExpectedCalls) and s.expected_calls == 0 for name in names)


def _toml(spec: dict[str, Any]) -> str:
    """A flag spec as TOML: top-level values, then `[options]`, then one `[[models]]` table per model."""
    lines = [f"{name} = {json.dumps(value)}" for name, value in spec.items() if name not in ("options", "models")]
    if spec.get("options"):
        lines += ["", "[options]", *(f"{name} = {json.dumps(value)}" for name, value in spec["options"].items())]
    for model in spec["models"]:
        lines += ["", "[[models]]", *(f"{key} = {json.dumps(value)}" for key, value in model.items())]
    return "\n".join(lines) + "\n"


def _option(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, Any]:
    """`--option KEY=VALUE` pairs; VALUE as TOML (`3`, `true`, `"x"`), else as a string."""
    options: dict[str, Any] = {}
    for pair in values:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            options[key.strip()] = value
    return options


def _absolute_paths(benchmark: str, options: dict[str, Any]) -> dict[str, Any]:
    """`--option` values the benchmark reads as paths, made absolute: typed relative to the current folder, they would
    otherwise be read relative to the spec's folder, the run directory."""
    found = get_benchmark(benchmark)
    parsed = parse_options(found.options_model, options, "--option")
    return {name: str(Path(value).absolute()) if isinstance(getattr(parsed, name), Path) else value
            for name, value in options.items()}


def _same_run(spec_path: Path, spec: dict[str, Any], prices: PriceTable) -> None:
    """Refuses a flag run whose folder holds the spec of another run (other models, strategies, ...).

    Raises:
        click.UsageError: naming both ways on: resume the earlier run, or start this one elsewhere.
    """
    if not spec_path.is_file():
        return
    earlier = load_spec(spec_path, prices)
    now = parse_spec(spec, str(spec_path), prices)
    if earlier.model_dump(include=set(IDENTITY)) != now.model_dump(include=set(IDENTITY)):
        folder = shlex.quote(str(spec_path.parent))
        raise click.UsageError(
            f"{spec_path.parent} holds another run (other models, strategies, samples or options): resume it "
            f"with `tripbench run {shlex.quote(str(spec_path))}`, or start this one with --run-dir "
            f"{folder}-2 (any new folder)")


@dataclass(frozen=True, slots=True)
class FlagRun:
    """A run described by command-line flags instead of a SPEC file."""

    benchmark: str
    models: tuple[str, ...]
    strategies: str | None
    split: str | None
    tasks: str | None
    samples: int | None
    options: dict[str, Any]

    @property
    def given(self) -> bool:
        """Whether any flag that describes a run was given (the benchmark has a default)."""
        return bool(self.models or self.strategies or self.split or self.tasks or self.samples or self.options)

    def spec(self, overrides: Overrides) -> dict[str, Any]:
        """The spec these flags describe, with the overrides in it."""
        return spec_from_flags(self.benchmark, self.models, self.strategies, self.split, {
            "tasks": self.tasks and [task.strip() for task in self.tasks.split(",") if task.strip()],
            "limit": overrides.limit, "samples": self.samples, "max_cost": overrides.max_cost,
            "options": _absolute_paths(self.benchmark, self.options)})

    def run_dir(self) -> Path:
        """`runs/<benchmark>-<split>`: where a flag run goes without `--run-dir`."""
        return Path("runs") / f"{self.benchmark.replace(':', '_')}-{self.split}"


@dataclass(frozen=True, slots=True)
class Overrides:
    """Spec settings the command line replaces (validated as the spec's own: `runner.engine.spec.with_overrides`)."""

    max_cost: float | None
    limit: int | None

    def given(self) -> dict[str, Any]:
        return {name: value for name, value in (("max_cost", self.max_cost), ("limit", self.limit))
                if value is not None}


@dataclass(frozen=True, slots=True)
class SessionFlags:
    """How this invocation runs; none of it is in the spec or changes a result."""

    dry_run: bool
    quiet: bool
    progress_every: float
    force: bool
    extend: bool
    grace: float
    shard: Shard | None
    ray_address: str | None

    def require_team(self, spec: RunSpec, source: str) -> None:
        """Refuses `--shard` and `--ray-address` for a spec without `[team]`: processes with caps and caches of their
        own would each spend the whole cap and pay again for each other's calls.

        Raises:
            click.UsageError: naming the flag and what to add.
        """
        flag = "--shard" if self.shard is not None else "--ray-address" if self.ray_address is not None else None
        if flag is not None and spec.team is None:
            raise click.UsageError(f"{flag} runs rollouts in several processes, which share one cache, spend cap and "
                                   f"rate limit only through a team database: add a [team] table to {source} (see "
                                   "README, Team runs)")


    def require_ray(self) -> None:
        """Refuses `--ray-address` where Ray is not installed, before anything runs.

        Raises:
            click.UsageError: with the command that installs it.
        """
        if self.ray_address is not None and importlib.util.find_spec("ray") is None:
            raise click.UsageError("--ray-address runs the rollouts on a Ray cluster, and Ray is not installed: pip "
                                   "install 'tripbench[ray]'")


def _gather(name: str, cls: type[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Hands a command the parameters named like `cls`'s fields as one `cls` value, as keyword `name`."""
    names = [item.name for item in dataclasses.fields(cls)]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def gathered(*args: Any, **kwargs: Any) -> None:
            kwargs[name] = cls(**{field: kwargs.pop(field) for field in names})
            command(*args, **kwargs)
        return gathered
    return decorate


def _shard(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Shard | None:
    try:
        return None if value is None else parse_shard(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("run", epilog=EXIT_CODES)
@click.argument("spec", type=click.Path(path_type=Path), required=False)
@click.option("--model", "models", multiple=True, metavar="MODEL",
              help="Without SPEC: a model to run (repeatable), e.g. openai:gpt-4o-mini.")
@click.option("--strategies", metavar="A,B", help="Without SPEC: the strategies, comma-separated (`tripbench list`).")
@click.option("--split", help="Without SPEC: the split (e.g. validation; `tripbench list` shows each benchmark's).")
@click.option("--benchmark", default=DEFAULT, show_default=True, help="Without SPEC: the benchmark.")
@click.option("--tasks", metavar="ID,ID", help="Without SPEC: only these task ids, comma-separated.")
@click.option("--samples", type=click.IntRange(min=1), help="Without SPEC: rollouts per task, model and strategy.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", callback=_option,
              help="Without SPEC: a field of the benchmark's [options] table (repeatable), e.g. shots=0.")
@click.option("--run-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where results go (default: the spec's own folder when it is a run directory, else runs/<spec "
                   "name> beside the spec; without SPEC, runs/<benchmark>-<split>). Re-running resumes.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True),
              help="Spend cap in USD for the whole run, earlier sessions included (overrides the spec).")
@click.option("--limit", type=click.IntRange(min=1),
              help="Only the first N tasks of the split, in its order, not N of each task kind a split mixes "
                   "(overrides the spec).")
@click.option("--dry-run", is_flag=True, help="Estimate calls, tokens and $ per model; send nothing (no API key "
              "needed).")
@click.option("--quiet", is_flag=True, help="No progress at all, only the summary.")
@click.option("--progress-every", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds between plain progress lines when the output is not a terminal (nohup, cron, CI).")
@click.option("--force", is_flag=True, help="Resume even though the benchmark's options or max_calls differ (never "
              "models, strategies, tasks, samples or data: see --extend).")
@click.option("--extend", is_flag=True, help="Add this spec's models, strategies, tasks or samples to a run another "
              "spec made (never changing what the run has); each model and strategy keeps its own N.")
@click.option("--grace", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Seconds in-flight rollouts get to finish after Ctrl-C / SIGTERM.")
@click.option("--shard", metavar="I/N", callback=_shard,
              help="Run only shard I of N (by the sha256 of each rollout key) into RUN_DIR/shard-I-of-N: one job of "
                   "a SLURM array or a Kubernetes Indexed Job; `status` and `report` of RUN_DIR merge the shards. "
                   "Needs the spec's [team].")
@click.option("--ray-address", metavar="ADDRESS",
              help="Run the rollouts on the actors of this Ray cluster (`auto`, `ray://HOST:10001`, or `local` for a "
                   "new one on this machine); this process stays the only writer of the results. Needs the spec's "
                   "[team] and `pip install 'tripbench[ray]'`.")
@click.pass_context
@_gather("flags", FlagRun)
@_gather("overrides", Overrides)
@_gather("session", SessionFlags)
def run_command(ctx: click.Context, spec: Path | None, run_dir: Path | None, flags: FlagRun, overrides: Overrides,
                session: SessionFlags) -> None:
    """Run (or resume) every rollout of a run spec: results go to RUN_DIR/results.sqlite as they finish.

    SPEC may be a run folder: every run keeps a copy of its spec in RUN_DIR/spec.toml, so `tripbench run RUN_DIR`
    resumes it. Without SPEC, `--model M [--model M2] --strategies a,b --split S` (and --limit, --max-cost, --tasks,
    --samples, --option) describe the run: the spec they make is checked, written to RUN_DIR/spec.toml and printed,
    so `tripbench run RUN_DIR` (or the same flags) resumes it. Flags for other models or strategies on the same
    split are refused until given a --run-dir of their own.
    """
    session.require_ray()
    console = output_console()
    lock_fd = None
    prices = load_price_table()  # the data home's, as a library caller's `prepare` loads it
    if spec is None:
        made = flags.spec(overrides)
        run_dir = run_dir or flags.run_dir()
        spec = run_dir / SPEC_FILE
        try:  # every check before anything is written, the flags' own first (a typo is not "another run")
            prepared = prepare(spec, spec=parse_spec(made, FLAGS, prices), shard=session.shard, prices=prices)
        except ConfigError as exc:  # about the flags, not the file they are to be written to
            raise ConfigError(FLAGS, exc.field, exc.expected, exc.got) from None
        session.require_team(prepared.spec, FLAGS)
        check_run_dir(run_dir, session.shard)
        _same_run(spec, made, prices)
        if not session.dry_run:
            asyncio.run(preflight(prepared))  # keys, servers, tools: a start that fails writes no folder
        text = _toml(made)
        if session.dry_run:
            click.echo(f"# {spec} (a dry run writes nothing)\n{text}", err=True)
        else:
            lock_fd = lock_run_dir(run_dir)  # a run dir another process holds keeps its spec
            spec.write_text(text, encoding="utf-8")
            click.echo(f"# {spec}\n{text}", err=True)
    elif flags.given:
        raise click.UsageError("--model, --strategies, --split, --tasks, --samples and --option describe a run "
                               "without a SPEC file; edit the spec")
    else:
        if spec.is_dir():  # a run folder: its spec, into the folder (`runner.cli.run_folder`)
            run_dir, spec = run_dir or spec, spec_of_folder(spec)
        prepared = prepare(spec, overrides=overrides.given(), shard=session.shard, prices=prices)
        session.require_team(prepared.spec, str(spec))
        run_dir = run_dir or default_run_dir(spec)
        check_run_dir(run_dir, session.shard)
        if not session.dry_run:
            asyncio.run(preflight(prepared))
    if session.ray_address is not None and prepared.batched:
        raise click.UsageError("--ray-address: batch models wait for their batches in one process; run "
                               f"{', '.join(sorted(prepared.batched))} without Ray, or set batch = false")
    if prepared.spec.team is not None and not (run_dir / RESULTS_FILE).is_file():  # a team run's first session
        if (hint := local_cache_hint(prepared.cache_dir)) is not None:
            click.echo(hint, err=True)
    table = prepared.prices
    for model in prepared.spec.models:  # without a cap an unknown model runs: a typo's provider errors cost time
        if model.prices is None and table.price_for(model.model) is None and (near := table.nearest(model.model)):
            click.echo(f"note: the price table does not know {model.model}: did you mean {near}?", err=True)
    for note in filter(None, (table.retirement_note(model, date.today(),
                                                    replay=prepared.spec.cache is CacheMode.REPLAY)
                              for model in dict.fromkeys(model.model for model in prepared.spec.models))):
        click.echo(f"note: {note}", err=True)  # a retired model's calls fail at the provider: say so before
    resume = f"tripbench run {shlex.quote(str(spec))} --run-dir {shlex.quote(str(run_dir))}"
    if session.shard is not None:
        resume += f" --shard {session.shard}"
        run_dir = session.shard.run_dir(run_dir)
    if session.dry_run:
        estimates, assumption = asyncio.run(estimate(prepared, run_dir))
        spent, spent_by = spent_before(run_dir, prepared)
        render_estimate(estimates, assumption, console, cap_usd=prepared.spec.max_cost, spent_usd=spent,
                        spent_by=spent_by)
        render_settings(prepared, console)
        return
    tune_for_a_run()  # after `prepare`: the loaded spec and data are frozen out of every collection
    with replay_workers(prepared, lock_fd) if session.ray_address is None else contextlib.nullcontext() as spread:
        report = asyncio.run(_execute(prepared, run_dir, session, console, lock_fd, spread))
    keep_spec(spec, run_dir if session.shard is None else run_dir.parent)  # `tripbench run RUN_DIR` resumes it
    _finish(ctx, report, run_dir, resume, console)


async def _execute(prepared: Prepared, run_dir: Path, session: SessionFlags, console: Console,
                   lock_fd: int | None, spread: Spread | None) -> RunReport:
    """The session, showing its progress live on a terminal, else as a plain line now and then on `console`;
    `spread`: a replay's worker processes (`replay_workers`)."""
    live = Console(stderr=True)
    quiet_or_terminal = live.is_terminal or session.quiet
    # nohup, cron, a CI log: a plain line now and then on the summary's console
    remote = None
    if session.ray_address is not None:
        from runner.engine.ray_workers import on_ray  # Ray is an optional extra

        remote = on_ray(session.ray_address)
    return await execute(prepared, run_dir, force=session.force, extend=session.extend, grace_s=session.grace,
                         lock_fd=lock_fd, remote=remote, spread=spread,
                         progress_console=live if quiet_or_terminal else console,
                         show_progress=quiet_or_terminal and not session.quiet,
                         log_every_s=None if quiet_or_terminal else session.progress_every)


def _finish(ctx: click.Context, report: RunReport, run_dir: Path, resume: str, console: Console) -> None:
    """Prints the summary and what to do next; exits with the code of the session's outcome."""
    with load_run(run_dir) as results:
        render_summary(results, console)
        missing = without_result(results)
        planned = sum(group.planned for group in summarize(results))
    if report.outcome == COMPLETED and not report.pending:  # said in words, not only by the table
        console.print(f"nothing to do: all {planned:,} rollouts of this run were done already")
    elif report.calls and report.hits == report.calls:
        console.print(f"every call came from the cache ({report.calls:,} calls, $0 spent in this session)")
    from reports.oracle import oracle_note  # the report code, only once a run ends (`run --help` stays light)

    if (oracle := oracle_note(run_dir)) is not None:  # its failures are the data's: say so (issue 31)
        console.print(oracle, markup=False, highlight=False, soft_wrap=True)
    if report.rerun:  # a resume after an outage or a spend cap: say which stored rollouts were tried again
        counts = ", ".join(f"{status} {n}" for status, n in report.rerun.most_common())
        console.print(f"run again in this session: {report.rerun.total()} stored rollouts that had ended as {counts}")
    for note in report.notes:
        console.print(f"note: {note}")
    if report.files:
        console.print(f"outputs: {run_dir / 'outputs'} ({len(report.files)} files)")
    whole = run_dir.parent if SHARD_DIR.fullmatch(run_dir.name) else run_dir
    console.print(f"report: tripbench report {shlex.quote(str(whole))}", soft_wrap=True)
    if report.outcome == INTERRUPTED:
        console.print(f"interrupted: {report.ran} rollouts finished in this session, the rest resume with: {resume}",
                      soft_wrap=True)
        ctx.exit(EXIT_INTERRUPTED)
    if report.outcome == BUDGET:
        left = report.pending - report.ran + report.statuses[BUDGET_EXHAUSTED]  # not started, or cut by the cap
        console.print(f"spend cap reached: {left} rollouts left; "
                      f"resume with a higher cap: {resume} --max-cost USD", soft_wrap=True)
        ctx.exit(EXIT_BUDGET)
    if report.outcome == FAILED:
        ctx.exit(EXIT_FAILED)
    if missing:
        console.print(f"completed, but {missing.total()} rollouts have no result of their own; "
                      f"run them again with: {resume}", soft_wrap=True)
        ctx.exit(EXIT_NO_RESULT)


@click.command("status")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (for scripts and cron).")
def status_command(run_dir: Path, as_json: bool) -> None:
    """Summarise a run directory: state, rollouts done per model and strategy, statuses, calls and money."""
    with load_run(run_dir) as results:
        if as_json:
            click.echo(orjson.dumps(summary_json(results), option=orjson.OPT_INDENT_2).decode())
        else:
            render_summary(results, output_console())
