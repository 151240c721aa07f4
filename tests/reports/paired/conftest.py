"""Real runs of the toy benchmark to compare (the engine, the mock server's echo model)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from runner.engine.execute import execute
from runner.engine.prepared import prepare
from tests.runner.engine_support import TOY

TASKS = 12


def _spec(folder: Path, name: str, base_url: str, strategies: tuple[str, ...] = ("scripted",), samples: int = 1,
          **options: object) -> Path:
    settings = {"tasks": TASKS, "max_calls": 6, **options}
    lines = [f'benchmark = "{TOY}"', 'split = "train"', f"strategies = {json.dumps(list(strategies))}",
             f"samples = {samples}", 'cache_dir = "cache"', 'evaluate = ["official"]', "", "[[models]]", 'name = "toy"',
             f'model = "openai-compatible:toy@{base_url}/v1"', "prices = { input = 1.0, output = 2.0 }", "",
             "[options]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items()), ""]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`a`; `again` (a's spec run again, from the cache); `b` (prompts reworded from step 2, task 3 crashing);
    `groups` (two strategies, two samples: scripted and silent, which calls nothing and so fails every task)."""
    from runner.mock_server import serve

    folder = tmp_path_factory.mktemp("toy-compare")

    async def make() -> dict[str, Path]:
        server = await serve("127.0.0.1", 0)
        try:
            runs = {"a": _spec(folder, "a", server.base_url), "again": _spec(folder, "a", server.base_url),
                    "b": _spec(folder, "b", server.base_url, reword_from=2, crash_task="3"),
                    "groups": _spec(folder, "groups", server.base_url, ("scripted", "silent"), samples=2)}
            for name, spec in runs.items():
                await execute(prepare(spec), folder / name, show_progress=False)
            return {name: folder / name for name in runs}
        finally:
            await server.close()
    return asyncio.run(make())
