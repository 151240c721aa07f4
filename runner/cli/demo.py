"""`tripbench demo`: the whole pipeline on a generated world, with no download and no API key.

1. generate a small deterministic TravelPlanner world (`benchmarks.travelplanner.world`) and import it with the
   real importer;
2. start the mock LLM server (the offline oracle as its reply function);
3. run two run specs through the real engine, gateway and cache: the two-stage agent with `offline:oracle`,
   `offline:noisy` and the oracle again behind the mock server through the real openai SDK; then the greedy
   baseline;
4. evaluate with the official evaluator (part of each run), check the noisy model's error statuses against the
   faults it injected, write the report of both runs (`tripbench report`) and print the paper's Table 3 figures
   per model and strategy from it.

Everything lands in `--out` (default: a fresh temporary folder): the world, the index, the specs, the runs
(results, outputs), the LLM cache and the report, so a second `tripbench demo --out DIR` runs everything again
and every LLM call comes back from the cache, for free. The model behind the mock server is priced like a small
hosted model, so the report shows what such a run would cost, and on a replay what the cache saved.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import click
from rich.console import Console
from rich.table import Table

from benchmarks.travelplanner.offline import NoisyConfig, injected_fault
from benchmarks.travelplanner.world import generate_world
from providers.mock_server import MockConfig, RunningServer, serve
from reports import build_report, write_report
from reports.table import Kind, show
from runner.engine import execute, prepare
from runner.results import RunResults, load_run
from sandbox_index import build_travelplanner_index

MOCK_REPLY = "benchmarks.offline:mock_reply"
TABLE3_HEADERS = ("Delivery", "CS micro", "CS macro", "Hard micro", "Hard macro", "Final")
MOCK_PORT_FILE = "mock-server.port"
MOCK_PRICES = "{ input = 0.15, output = 0.6 }"
"""USD per million tokens for the model behind the mock server (a small hosted model's list price)."""


@dataclass(slots=True)
class DemoReport:
    out: Path
    runs: list[Path] = field(default_factory=list)
    table3: list[tuple[str, str, list[float | None]]] = field(default_factory=list)
    """(model, strategy, the six official rates), from the report."""
    report: Path | None = None
    """The report's HTML page."""
    noisy_checked: int = 0
    noisy_matched: int = 0
    noisy_statuses: Counter[str] = field(default_factory=Counter)


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for the world, runs, cache and report (default: a new temporary folder).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated world.")
@click.option("--per-cell", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Queries per (level, days) cell: 9 cells.")
def demo_command(out: Path | None, seed: int, per_cell: int) -> None:
    """Run the full pipeline on a generated world with offline models: no download, no API key."""
    console = Console()
    out = out or Path(tempfile.mkdtemp(prefix="tripbench-demo-"))
    report = asyncio.run(run_demo(out, seed=seed, per_cell=per_cell, console=console))
    _render(report, console)


async def run_demo(out: Path, *, seed: int = 0, per_cell: int = 1, console: Console | None = None) -> DemoReport:
    """Generate, import, run, evaluate; returns what the demo found (see the module docstring)."""
    out = out.resolve()
    say = console.print if console is not None else (lambda *_: None)
    world = await asyncio.to_thread(generate_world, out / "world", seed=seed, per_cell=per_cell)
    index = out / "world" / "travelplanner.sqlite"
    await asyncio.to_thread(build_travelplanner_index, world.database, index)
    say(f"world: {sum(world.queries_per_level.values())} queries, sandbox {index}")
    report = DemoReport(out)
    server = await _serve_mock(out / MOCK_PORT_FILE)
    try:
        models = [("oracle", "offline:oracle"), ("noisy", "offline:noisy"),
                  ("oracle-via-mock-server", f"openai-compatible:oracle@{server.openai_base_url}")]
        for name, strategies, run_models in (("offline-models", ["two-stage"], models),
                                             ("greedy", ["greedy"], [("no-llm", "offline:oracle")])):
            spec = _write_spec(out / f"{name}.toml", world.queries, index, strategies, run_models)
            run_dir = out / "runs" / name
            # A demo run starts afresh: on a second demo every call is answered by the cache, for free.
            await asyncio.to_thread(shutil.rmtree, run_dir, ignore_errors=True)
            await execute(await asyncio.to_thread(prepare, spec), run_dir, show_progress=False)
            report.runs.append(run_dir)
            say(f"run {name}: done")
    finally:
        await server.close()
    for run_dir in report.runs:
        with load_run(run_dir) as results:
            _check_noisy(results, report)
    built = await asyncio.to_thread(build_report, report.runs)
    report.report = (await asyncio.to_thread(write_report, built, out / "report"))["html"]
    rates = next(table for table in built.tables() if table.name == "pass_rates")
    report.table3 = [(str(row[1]), str(row[2]), list(row[5:])) for row in rates.rows]  # type: ignore[misc]
    return report


async def _serve_mock(port_file: Path) -> RunningServer:
    """The mock server on the port an earlier demo in this folder used, if free: its base URL is part of the
    model's cache key (endpoint identity), so the same port is what lets a second demo replay from the cache."""
    config = MockConfig(reply=MOCK_REPLY)
    port = int(port_file.read_text()) if port_file.is_file() and port_file.read_text().strip().isdigit() else 0
    try:
        server = await serve("127.0.0.1", port, config)
    except OSError:  # taken by now: a new port, and the mock model's calls miss the cache this once
        server = await serve("127.0.0.1", 0, config)
    port_file.write_text(str(urlsplit(server.base_url).port))
    return server


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


def _check_noisy(results: RunResults, report: DemoReport) -> None:
    """The noisy model's statuses against the faults it injected into each query."""
    tasks = {task.id: task for task in results.tasks()}
    for rollout in results.rollouts:
        if rollout.key.model == "noisy":
            fault = injected_fault(tasks[rollout.key.task].input["query"], NoisyConfig())
            expected = fault.expected_status if fault else "delivered"
            report.noisy_checked += 1
            report.noisy_matched += expected == rollout.status
            report.noisy_statuses[rollout.status] += 1


def _render(report: DemoReport, console: Console) -> None:
    table = Table(title="TravelPlanner Table 3 (official evaluator), demo world")
    table.add_column("model")
    table.add_column("strategy")
    for header in TABLE3_HEADERS:
        table.add_column(header, justify="right")
    for model, strategy, rates in report.table3:
        table.add_row(model, strategy, *(show(rate, Kind.PCT) for rate in rates))
    console.print(table)
    statuses = ", ".join(f"{status} {count}" for status, count in sorted(report.noisy_statuses.items()))
    console.print(f"offline:noisy: {report.noisy_matched}/{report.noisy_checked} rollouts ended with the status of "
                  f"the fault injected into them ({statuses})")
    console.print(f"report: {report.report}  (Markdown, CSV and plots beside it)")
    console.print(f"everything is in {report.out}:")
    console.print(f"  world (database + queries): {report.out / 'world'}")
    for run_dir in report.runs:
        console.print(f"  run: {run_dir}  (tripbench status {run_dir})")
    console.print(f"  LLM cache: {report.out / 'cache'}  (run the demo again with --out {report.out}: every call "
                  "is then a cache hit)")
