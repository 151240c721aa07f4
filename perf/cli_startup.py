"""`tripbench` start-up: wall time of CLI calls as subprocesses, beside the bare interpreter and an eager CLI.

Each command runs as the console script runs it (`from runner.cli.main import main; main()`), from the repository
root. Baselines, same run: `python -c pass` (the interpreter alone: the floor), and each command again after
importing every module of runner/cli/ first, as the CLI did before its commands were loaded lazily. Rounds
interleave all variants; the best of `--repeat` rounds is kept.

    python perf/cli_startup.py               # best of 5
    python perf/cli_startup.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

from cache import CacheStore

REPO = Path(__file__).resolve().parents[1]
LAUNCH = "from runner.cli.main import main; main()"
EAGER = "import " + ", ".join(f"runner.cli.{path.stem}" for path in sorted((REPO / "runner" / "cli").glob("*.py"))
                              if path.stem != "__init__") + "; " + LAUNCH


# Light calls first, then ones that need heavier modules (`run` the engine, `report` the report code).
COMMANDS = ("--help", "--version", "cache stats --cache-dir CACHE", "tool --help", "evaluate --help", "run --help",
            "report --help")


def wall_ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - started) * 1e3
    if done.returncode != 0:
        raise SystemExit(f"{argv[2:]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def main(repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="tripbench-startup-") as folder:
        env = {**os.environ, "TRIPBENCH_HOME": folder}  # nothing reads or writes the user's data home
        CacheStore(cache_dir := Path(folder) / "cache").close()  # a cache to inspect (inspecting creates none)
        calls = {"baseline": [sys.executable, "-c", "pass"]}
        for command in COMMANDS:
            args = [str(cache_dir) if arg == "CACHE" else arg for arg in command.split()]
            calls[f"lazy {command}"] = [sys.executable, "-c", LAUNCH, *args]
            calls[f"eager {command}"] = [sys.executable, "-c", EAGER, *args]
        best = dict.fromkeys(calls, float("inf"))
        for _ in range(repeat):
            for name, argv in calls.items():
                best[name] = min(best[name], wall_ms(argv, env))
    base = best["baseline"]
    print(f"start-up wall time, best of {repeat} round(s); python -c pass (baseline): {base:.1f} ms")
    print(f"{'command':<40} {'lazy (now)':>17} {'all commands imported':>22} {'saved':>10}")
    for command in COMMANDS:
        lazy, eager = best[f"lazy {command}"], best[f"eager {command}"]
        print(f"tripbench {command:<30} {lazy:7.1f} ms {lazy / base:5.1f}x "
              f"{eager:11.1f} ms {eager / base:5.1f}x {eager - lazy:7.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds, best kept (default 5)")
    main(parse_args(parser, repeat=1).repeat)
