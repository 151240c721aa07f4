"""`tripbench demo`: the whole pipeline on generated worlds, with no download and no API key.

1. every benchmark with a demo (`benchmarks.base.Demo`) generates a small world and writes its run specs;
2. the mock LLM server starts, answering as the offline models of the demo's runs do (`benchmarks.offline`);
3. every run goes through the real engine, gateway and cache, and is evaluated by the benchmark's evaluator;
4. one report covers all runs (`tripbench report`); the demo prints each benchmark's headline table from it and
   the benchmarks' checks (e.g. the noisy model's mistakes found again by the evaluation).

Everything lands in `--out` (default: a fresh temporary folder): the worlds, the specs, the runs, the LLM cache
and the report, so a second `tripbench demo --out DIR` runs everything again and every LLM call comes back from
the cache, for free. The model behind the mock server is priced like a small hosted model, so the report shows
what such a run would cost, and on a replay what the cache saved.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import click
from rich.console import Console

from benchmarks.base import Demo
from benchmarks.offline import OfflineModels, offline_models
from benchmarks.registry import DEFAULT, available, get_benchmark
from benchmarks.reporting import Table
from reports import build_report, write_report
from reports.terminal import terminal_table
from runner.cli.console import output_console
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import MockConfig, RunningServer, serve

MOCK_PORT_FILE = "mock-server.port"


@dataclass(slots=True)
class DemoReport:
    out: Path
    runs: list[Path] = field(default_factory=list)
    specs: list[Path] = field(default_factory=list)
    """The run specs the benchmarks wrote, one per run (examples to start from)."""
    headlines: list[Table] = field(default_factory=list)
    """Each benchmark's headline table, from the report."""
    checks: list[str] = field(default_factory=list)
    report: Path | None = None
    """The report's HTML page."""


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for the worlds, runs, cache and report (default: a new temporary folder).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated worlds.")
def demo_command(out: Path | None, seed: int) -> None:
    """Run the full pipeline on generated worlds with offline models: no download, no API key."""
    console = output_console()
    out = out or Path(tempfile.mkdtemp(prefix="tripbench-demo-"))
    report = asyncio.run(run_demo(out, seed=seed, console=console))
    _render(report, console)


async def run_demo(out: Path, *, seed: int = 0, console: Console | None = None) -> DemoReport:
    """Generate, run, evaluate and report every benchmark's demo; returns what the demo found."""
    out = out.resolve()
    report = DemoReport(out)
    answers = OfflineModels()  # the mock server answers as the offline models of the runs prepared so far
    server = await _serve_mock(out / MOCK_PORT_FILE, answers)
    headlines: list[str] = []
    ran: list[Demo] = []
    names = sorted(available(), key=lambda name: name != DEFAULT)  # the default benchmark first
    demos = [(name, demo) for name in names if (demo := get_benchmark(name).demo) is not None]
    try:
        for name, demo in demos:
            for run in await asyncio.to_thread(demo.demo_runs, out, server.openai_base_url, seed=seed):
                run_dir = out / "runs" / run.name
                # A demo run starts afresh: on a second demo every call is answered by the cache, for free.
                await asyncio.to_thread(shutil.rmtree, run_dir, ignore_errors=True)
                prepared = await asyncio.to_thread(prepare, run.spec)
                answers.include(offline_models(prepared.benchmark, prepared.tasks, prepared.options))
                await execute(prepared, run_dir, show_progress=False)
                report.runs.append(run_dir)
                report.specs.append(run.spec)
                ran.append(demo)
                headlines += [run.headline] if run.headline not in headlines else []
                if console is not None:
                    console.print(f"{name} run {run.name}: done")
    finally:
        await server.close()
    built = await asyncio.to_thread(build_report, report.runs)
    report.checks = [line for demo, run in zip(ran, built.runs, strict=True)
                     for line in demo.demo_checks(run)]  # the runs as the report read them, read once
    report.report = (await asyncio.to_thread(write_report, built, out / "report"))["html"]
    report.headlines = [table for name in headlines for table in built.tables() if table.name == name]
    return report


async def _serve_mock(port_file: Path, answers: OfflineModels) -> RunningServer:
    """The mock server answering as `answers`, on the port an earlier demo in this folder used, if free: its base URL
    is part of the model's cache key (endpoint identity), so the same port is what lets a second demo replay from the
    cache."""
    config = MockConfig()
    port_file.parent.mkdir(parents=True, exist_ok=True)
    port = int(port_file.read_text()) if port_file.is_file() and port_file.read_text().strip().isdigit() else 0
    try:
        server = await serve("127.0.0.1", port, config, reply=answers.mock_reply)
    except OSError:  # taken by now: a new port, and the mock model's calls miss the cache this once
        server = await serve("127.0.0.1", 0, config, reply=answers.mock_reply)
    port_file.write_text(str(urlsplit(server.base_url).port))
    return server


def _render(report: DemoReport, console: Console) -> None:
    for table in report.headlines:
        console.print(terminal_table(table))
    for line in report.checks:
        console.print(line)
    console.print(f"report: {report.report}  (Markdown, CSV and plots beside it)", soft_wrap=True)
    console.print(f"everything is in {report.out}:", soft_wrap=True)
    console.print(f"  generated worlds: {report.out / 'worlds'}", soft_wrap=True)
    for run_dir in report.runs:
        console.print(f"  run: {run_dir}  (tripbench status {run_dir})", soft_wrap=True)
    console.print("  run specs (examples to copy and edit; `tripbench run SPEC --dry-run`):")
    for spec in report.specs:
        console.print(f"    {spec}", soft_wrap=True)
    console.print(f"  LLM cache: {report.out / 'cache'}  (run the demo again with --out {report.out}: every call "
                  "is then a cache hit)", soft_wrap=True)
