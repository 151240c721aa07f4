"""Run specs for report tests: real runs through the engine, the offline models and greedy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from runner.engine.execute import execute
from runner.engine.prepared import prepare


def write_spec(folder: Path, name: str, *, queries: str, models: list[tuple[str, str]], strategies: list[str],
               index: Path, data_dir: Path | None = None, extra: str = "",
               evaluate: tuple[str, ...] = ("official", "strict")) -> Path:
    """A run spec over a split name (`split = "train"`) or a query file (`queries = "FILE"`)."""
    source = f'split = "{queries}"' if "." not in queries else f'queries = "{queries}"'
    lines = ['benchmark = "travelplanner"', source, f"strategies = {json.dumps(strategies)}",
             'cache_dir = "cache"', "concurrency = 16", f"evaluate = {json.dumps(list(evaluate))}", extra, "",
             "[options]",
             f'index = "{index}"', *([f'data_dir = "{data_dir}"'] if data_dir else []), ""]
    for label, model in models:
        lines += ["[[models]]", f'name = "{label}"', f'model = "{model}"', ""]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run(spec: Path, run_dir: Path) -> Path:
    asyncio.run(execute(prepare(spec), run_dir, show_progress=False))
    return run_dir
