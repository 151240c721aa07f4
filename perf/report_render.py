"""Report over about 1,000 rollouts: read, build, render (Markdown, CSV, plots, HTML), beside the raw store read.

Makes a real run first: the offline oracle and noisy models, two-stage, on the staged train split, with enough
samples per query to reach `--size` rollouts (trajectories of up to 30 steps, stored evaluations). Then times, in
the same process:

    baseline   load_run + every rollout's steps and calls: the bytes a report has to read, nothing more
    build      build_report (reading included): tables, Figure 2 shares, Table 4, plots
    write      write_report: report.md, one CSV per table, PNGs, the self-contained HTML with the drill-down

    python perf/report_render.py               # ~1,000 rollouts (the run takes about a minute to make)
    python perf/report_render.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

from reports import build_report, write_report
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.store.results import load_run
from sandbox_index import build_travelplanner_index

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"
QUERIES = 45
MODELS = (("oracle", "offline:oracle"), ("noisy", "offline:noisy"))


def make_run(folder: Path, size: int) -> Path:
    index = folder / "travelplanner.sqlite"
    build_travelplanner_index(DATA / "database", index)
    samples = max(1, math.ceil(size / (QUERIES * len(MODELS))))
    lines = ['benchmark = "travelplanner"', 'split = "train"', 'strategies = ["two-stage"]', 'cache_dir = "cache"',
             f"samples = {samples}", "concurrency = 64", 'evaluate = ["official"]', "", "[sampling]",
             "temperature = 1.0", "", "[options]", f'index = "{index}"', f'data_dir = "{DATA}"', ""]
    for label, model in MODELS:
        lines += ["[[models]]", f'name = "{label}"', f'model = "{model}"', ""]
    spec = folder / "perf.toml"
    spec.write_text("\n".join(lines), encoding="utf-8")
    run_dir = folder / "run"
    asyncio.run(execute(prepare(spec), run_dir, show_progress=False))
    return run_dir


def read_everything(run_dir: Path) -> int:
    with load_run(run_dir) as results:
        steps = sum(len(results.steps(r.id)) for r in results.rollouts)
        results.calls()
        results.evaluations("official")
        return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="rollouts, about (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds, best kept (default 3)")
    args = parse_args(parser, size=50, repeat=1)
    with tempfile.TemporaryDirectory(prefix="tripbench-perf-report-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        run_dir = make_run(folder, args.size)
        print(f"run made in {time.perf_counter() - started:.1f} s")
        best = {"baseline": math.inf, "build": math.inf, "write": math.inf}
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            steps = read_everything(run_dir)
            t1 = time.perf_counter()
            report = build_report([run_dir])
            t2 = time.perf_counter()
            files = write_report(report, folder / "report")
            t3 = time.perf_counter()
            for name, seconds in (("baseline", t1 - t0), ("build", t2 - t1), ("write", t3 - t2)):
                best[name] = min(best[name], seconds)
        rollouts = sum(len(g.rollouts) for g in report.runs[0].groups)
        html = files["html"].stat().st_size
        print(f"{rollouts:,} rollouts, {steps:,} steps; report.html {html / 1e6:.1f} MB, "
              f"{len(report.tables())} tables, {len(report.plots())} plots (best of {args.repeat})")
        total = best["build"] + best["write"]
        print(f"  baseline: read the store        {best['baseline']:6.2f} s")
        print(f"  build_report (reads included)   {best['build']:6.2f} s")
        print(f"  write_report (md, csv, png, html) {best['write']:4.2f} s")
        print(f"  report total                    {total:6.2f} s = {total / best['baseline']:.1f}x the raw read "
              "(goal: a few seconds)")


if __name__ == "__main__":
    main()
