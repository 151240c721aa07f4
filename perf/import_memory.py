"""Peak memory of `tripbench import-plans`, `evaluate` and `report` on big TravelEval plans files.

Each file is an official generator's plans array (indented JSON, `plans_<model>_<strategy>.json`) of the offline
oracle's plans (`offline/plan_builder.py`) for queries spread over the `all` split, repeated until the file holds
the size asked for (each repeat of a query's plan is its next sample). Each command runs as its own process, offline
distances, the sandbox index built beforehand: `import-plans` of the file into a run directory, `evaluate` of the
file, `report` of the imported run; its peak resident memory is the kernel's (`wait4`'s `ru_maxrss`).
Printed per size: the file's size and plans, then per command its wall time and peak memory (the goal: <= 600 MB
whatever the file's size, i.e. a constant plus a few plans); with `--baseline DIR`, the same commands run with the
code of another checkout (e.g. the main branch's) first, on the same file, side by side.

    python perf/import_memory.py                            # a 100 MB file (about 8,000 plans)
    python perf/import_memory.py --megabytes 100 278 1000   # three sizes, one after the other
    python perf/import_memory.py --baseline ../main         # also with another checkout's code
    python perf/import_memory.py --smoke                    # a smoke size: 2 MB
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def peak(arguments: list[str], code: Path, environment: dict[str, str]) -> tuple[float, float]:
    """Runs the CLI of the checkout `code` with `arguments`; returns its wall seconds and peak resident memory in
    MB."""
    environment = {**environment, "PYTHONPATH": os.pathsep.join(filter(None, (str(code),
                                                                               os.environ.get("PYTHONPATH"))))}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "runner.cli.main", *arguments], cwd=code, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""  # read as it comes: no stall
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(arguments[:1])} failed ({process.returncode}): {error[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def commands(path: Path, run_dir: Path) -> dict[str, list[str]]:
    """The measured commands on the plans file `path`, the import into `run_dir` first (the report reads it)."""
    return {
        "import-plans": ["import-plans", str(path), "--benchmark", "traveleval", "--run-dir", str(run_dir),
                         "--option", f"data_dir={DATA}", "--option", "distance=offline"],
        "evaluate": ["evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(DATA), "--distance",
                     "offline"],
        "report": ["report", str(run_dir), "--out", str(run_dir / "report")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="import_memory.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, nargs="+", default=[100.0], help="the plans files' sizes")
    parser.add_argument("--queries", type=int, default=100, help="queries whose oracle plans are repeated")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="also run the commands with the code of this checkout (e.g. the main branch's)")
    args = parse_args(parser, megabytes=[2.0], queries=10)
    codes = {"before": args.baseline.resolve(), "now": REPO} if args.baseline else {"now": REPO}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        environment = {**os.environ, HOME_ENV: str(folder / "home")}
        os.environ[HOME_ENV] = environment[HOME_ENV]  # the index is built here once, before the measured commands
        plans = oracle_plans(args.queries)
        for megabytes in args.megabytes:
            path = folder / "plans_perf_direct.json"
            count = write_array(path, plans, megabytes)
            size = path.stat().st_size / 1e6
            print(f"TravelEval plans array: {size:.0f} MB, {count:,} plans ({len(plans)} distinct oracle plans)",
                  flush=True)
            for label, code in codes.items():
                run_dir = folder / f"run-{label}"
                for name, arguments in commands(path, run_dir).items():
                    wall, peak_mb = peak(arguments, code, environment)
                    print(f"{name} of a {size:.0f} MB plans file ({count:,} plans), {label} ({code}): {wall:.1f} s, "
                          f"peak memory {peak_mb:,.0f} MB (goal <= 600 MB)", flush=True)
                shutil.rmtree(run_dir)
            path.unlink()


if __name__ == "__main__":
    main()
