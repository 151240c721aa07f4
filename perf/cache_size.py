"""Cache bytes on disk and hit latency: compact entries (shared prompt chunks, zlib) beside whole ones.

Runs the two-stage agent on the staged train split with the offline oracle model (no key, no network) into a fresh
cache, which tripbench writes compact. The same entries are then written whole, as tripbench wrote them before
(orjson of the entry, every prompt in full), into a second directory. Printed: entries, bytes on disk of each
directory and their ratio (goal: compact <= 15 % of whole), and the latency of a hit (`CacheStore.get`, as the
gateway reads) in each, p50 / p95 over every entry (goal: p95 <= 0.3 ms).

    python perf/cache_size.py            # the 45 train queries of ../shared/data/travelplanner
    python perf/cache_size.py --smoke    # 2 queries
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import diskcache
import orjson
from _smoke import parse_args

from cache import CacheStore
from runner.engine.execute import execute
from runner.engine.prepared import prepare

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"


def disk_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def hit_latencies_ms(folder: Path, keys: list[str]) -> list[float]:
    with CacheStore(folder) as store:
        store.counting = False
        times = []
        for key in keys:
            started = time.perf_counter()
            assert store.get(key) is not None
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the staged TravelPlanner folder")
    parser.add_argument("--limit", type=int, default=45, help="train queries (default 45)")
    args = parse_args(parser, limit=2)
    data = args.data.resolve()
    with tempfile.TemporaryDirectory(prefix="tripbench-perf-") as tmp:
        folder = Path(tmp)
        from sandbox_index import build_travelplanner_index

        index = folder / "travelplanner.sqlite"
        build_travelplanner_index(data / "database", index)
        spec = folder / "two-stage.toml"
        spec.write_text(f'benchmark = "travelplanner"\nsplit = "train"\nlimit = {args.limit}\n'
                        f'strategies = ["two-stage"]\ncache_dir = "compact"\nconcurrency = 16\nevaluate = []\n\n'
                        f'[options]\ndata_dir = "{data}"\nindex = "{index}"\n\n[[models]]\nmodel = "offline:oracle"\n',
                        encoding="utf-8")
        asyncio.run(execute(prepare(spec), folder / "run", show_progress=False))
        whole = diskcache.Cache(str(folder / "whole"))
        with CacheStore(folder / "compact") as store:
            keys = [key for key, entry in store.entries()]
            with whole.transact():
                for key, entry in store.entries():
                    whole.set(key, orjson.dumps(entry))  # the first format: the entry whole, as JSON
        whole.close()
        compact_bytes, whole_bytes = disk_bytes(folder / "compact"), disk_bytes(folder / "whole")
        print(f"{len(keys):,} cache entries of {args.limit} two-stage rollouts (offline oracle)")
        print(f"whole entries (before)   {whole_bytes:>12,} bytes on disk")
        print(f"compact entries (now)    {compact_bytes:>12,} bytes on disk   {compact_bytes / whole_bytes:6.1%} "
              "of before (goal <= 15 %)")
        for label, path in (("whole", folder / "whole"), ("compact", folder / "compact")):
            times = sorted(hit_latencies_ms(path, keys))
            p95 = times[int(len(times) * 0.95)]
            print(f"hit latency, {label:<8} p50 {statistics.median(times):.3f} ms   p95 {p95:.3f} ms "
                  "(goal p95 <= 0.3 ms)")


if __name__ == "__main__":
    main()
