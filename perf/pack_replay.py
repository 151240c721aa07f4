"""Packs: the size of a pack beside the cache folder it came from, and the time to pack a run and to replay it.

Imports the staged TravelPlanner data into a fresh data home, fills a fresh cache with a two-stage run of
`offline:oracle` (`--rollouts`, the staged validation queries with as many samples as needed), then, as a user would:
`tripbench pack RUN_DIR` (timed) and `tripbench replay PACK` in another fresh data home holding the same data, with
no API key and no cache folder (timed from the command's start to its exit: reading and checking the pack, loading
the entries, every rollout, evaluation, outputs and the comparison of every table). Printed: the cache folder's and
the pack's bytes and their ratio, and both times.

    python perf/pack_replay.py               # 1,000 rollouts
    python perf/pack_replay.py --smoke       # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"
REPO = Path(__file__).resolve().parents[1]
VALIDATION_QUERIES = 180
LAUNCH = "from runner.cli.main import main; main()"


def tripbench(*args: str, home: Path) -> tuple[float, str]:
    """`tripbench ARGS` with `home` as its data home and no API key: its wall seconds and output."""
    env = {name: value for name, value in os.environ.items() if not name.endswith("_API_KEY")}
    env |= {"TRIPBENCH_HOME": str(home), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCH, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"tripbench {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}"
                         f"{done.stdout[-2000:]}")
    return time.perf_counter() - started, done.stdout + done.stderr


def size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(prog="pack_replay.py", description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=1000, help="rollouts of the run (default 1000)")
    parser.add_argument("--data", type=Path, default=DATA, help="the staged TravelPlanner folder")
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it (to look into the pack)")
    args = parse_args(parser, rollouts=10)
    samples = math.ceil(args.rollouts / VALIDATION_QUERIES)
    with tempfile.TemporaryDirectory(prefix="tripbench-pack-") as tmp:
        folder = args.keep or Path(tmp)
        homes = folder / "home", folder / "elsewhere"
        for home in homes:
            tripbench("data", "import", "travelplanner", str(args.data), home=home)
        spec = folder / "run.toml"
        spec.write_text(f"""benchmark = "travelplanner"
split = "validation"
strategies = ["two-stage"]
samples = {samples}
limit = {math.ceil(args.rollouts / samples)}
cache_dir = "cache"

[[models]]
model = "offline:oracle"
""", encoding="utf-8")
        fill, _ = tripbench("run", str(spec), "--run-dir", str(folder / "run"), "--quiet", home=homes[0])
        packed, _ = tripbench("pack", str(folder / "run"), home=homes[0])
        pack = folder / "run.tbpack"
        replayed, said = tripbench("replay", str(pack), "--run-dir", str(folder / "again"), home=homes[1])
        cache, bytes_ = size(folder / "cache"), pack.stat().st_size
        verdict = next((line for line in said.splitlines() if line.startswith(("identical", "different"))), said)
    print(f"{args.rollouts:,} two-stage rollouts (offline:oracle): the run took {fill:.1f} s")
    print(f"cache folder {cache:,} bytes, pack {bytes_:,} bytes: the pack is {cache / bytes_:.1f} x smaller")
    print(f"tripbench pack: {packed:.1f} s; tripbench replay (fresh data home, no key, no cache folder): "
          f"{replayed:.1f} s; {verdict}")


if __name__ == "__main__":
    main()
