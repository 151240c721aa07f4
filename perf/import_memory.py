"""Peak memory of `tripbench import-plans` and `tripbench evaluate` on a big TravelEval plans file.

The file is an official generator's plans array (indented JSON, `plans_<model>_<strategy>.json`) of the offline
oracle's plans (`offline/plan_builder.py`) for queries spread over the `all` split, repeated until the file holds
`--megabytes` (each repeat of a query's plan is its next sample). Each command runs as its own process, offline
distances, the sandbox index built beforehand; its peak resident memory is the kernel's (`wait4`'s `ru_maxrss`).
Printed: the file's size and plans, then per command its wall time and peak memory (the goal: <= 600 MB whatever
the file's size, i.e. a constant plus a few plans).

    python perf/import_memory.py                   # a 100 MB file (about 12,000 plans)
    python perf/import_memory.py --megabytes 1000  # 1 GB
    python perf/import_memory.py --smoke           # a smoke size: 2 MB
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _smoke import parse_args

from benchmarks.traveleval.dataset import load_tasks
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from datahome.home import HOME_ENV

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traveleval"
REPO = Path(__file__).resolve().parents[1]


def oracle_plans(queries: int) -> list[dict[str, Any]]:
    """The oracle's plans for `queries` queries spread over the `all` split (those it can plan)."""
    tasks = load_tasks(DATA, "all")
    with Sandbox.open(ensure_index(DATA)) as sandbox:
        chosen = tasks[::max(1, len(tasks) // queries)][:queries]
        return [plan for task in chosen if (plan := build_plan(sandbox, task.input)) is not None]


def write_array(path: Path, plans: list[dict[str, Any]], megabytes: float) -> int:
    """Writes the official generator's indented array of `plans`, cycled until the file holds `megabytes`;
    returns the number of entries."""
    texts = [json.dumps(plan, ensure_ascii=False, indent=2) for plan in plans]
    written = count = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[\n")
        while written < megabytes * 1e6:
            text = texts[count % len(texts)]
            handle.write((",\n" if count else "") + text)
            written += len(text) + 2
            count += 1
        handle.write("\n]\n")
    return count


def peak(arguments: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Runs the CLI with `arguments`; returns its wall seconds and peak resident memory in MB."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "runner.cli.main", *arguments], cwd=REPO, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(arguments[:1])} failed ({process.returncode}): {error[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(prog="import_memory.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=100.0, help="the plans file's size")
    parser.add_argument("--queries", type=int, default=100, help="queries whose oracle plans are repeated")
    args = parse_args(parser, megabytes=2.0, queries=10)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        environment = {**os.environ, HOME_ENV: str(folder / "home"),
                       "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
        os.environ[HOME_ENV] = environment[HOME_ENV]  # the index is built here once, before the measured commands
        plans = oracle_plans(args.queries)
        path = folder / "plans_perf_direct.json"
        count = write_array(path, plans, args.megabytes)
        size = path.stat().st_size / 1e6
        print(f"TravelEval plans array: {size:.0f} MB, {count:,} plans ({len(plans)} distinct oracle plans)")
        commands = {
            "import-plans": ["import-plans", str(path), "--benchmark", "traveleval", "--run-dir",
                             str(folder / "run"), "--option", f"data_dir={DATA}", "--option", "distance=offline"],
            "evaluate": ["evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(DATA), "--distance",
                         "offline"],
        }
        for name, arguments in commands.items():
            wall, megabytes = peak(arguments, environment)
            print(f"{name} of a {size:.0f} MB plans file ({count:,} plans): {wall:.1f} s, peak memory "
                  f"{megabytes:,.0f} MB (goal <= 600 MB)", flush=True)


if __name__ == "__main__":
    main()
