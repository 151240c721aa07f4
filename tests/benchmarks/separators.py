"""Replies holding U+2028, U+2029 and U+0085: valid JSON inside strings (orjson writes them raw), where
`str.splitlines()` would cut a JSON line in pieces. The mock server's reply function for the round-trip tests."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.jsonl import read_jsonl
from benchmarks.offline import OfflineModels, offline_models
from benchmarks.registry import get_benchmark
from providers.scripted_replies import MockRequest
from tests.runner.engine_support import CLI

SEPARATORS = "\u2028\u2029\u0085"
"""The three characters `str.splitlines()` splits at that a JSON string may hold unescaped."""


def oracle_of(benchmark: str, split: str, data_dir: Path) -> OfflineModels:
    """The offline models of a run of `benchmark` on `split` (its tasks read from `data_dir`)."""
    found = get_benchmark(benchmark)
    options = found.options_model(data_dir=data_dir)
    return offline_models(found, found.load_tasks(split, options), options)


def with_separators(models: OfflineModels) -> Callable[[MockRequest], str]:
    """A mock server's reply function: `offline:oracle`'s reply from `models`, the separators at the start of every
    `description` of a JSON plan and at the end of a text answer."""
    def reply(request: MockRequest) -> str:
        answer = models.reply_as("oracle", request)
        marked = re.sub(r'("description":\s*")', lambda match: match[1] + SEPARATORS, answer)
        return marked if marked != answer else answer + SEPARATORS
    return reply


async def run_with_separators(server_url: str, tmp_path: Path, fields: str, *,
                              home: Path | None = None) -> tuple[Path, str]:
    """`tripbench run` of a spec (`fields`: its TOML lines, an `[options]` table last) whose one model is the mock
    server at `server_url` answering `oracle_with_separators`; returns the run directory and the run's output."""
    spec = tmp_path / "run.toml"
    spec.write_text(f'cache_dir = "cache"\n{fields}\n\n[[models]]\nname = "sep"\n'
                    f'model = "openai-compatible:oracle@{server_url}/v1"\nprices = {{ input = 0.0, output = 0.0 }}\n',
                    encoding="utf-8")
    run_dir = tmp_path / "run"
    env = {**os.environ, **({"TRIPBENCH_HOME": str(home)} if home else {})}
    process = await asyncio.create_subprocess_exec(*CLI, "run", str(spec), "--run-dir", str(run_dir), "--quiet",
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                   env=env)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    return run_dir, output.decode()


def tripbench(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`tripbench ARGS` to completion, output as text."""
    env = {**os.environ, **({"TRIPBENCH_HOME": str(home)} if home else {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, check=False, env=env)


def json_lines(path: Path) -> list[Any]:
    """Every line of a JSON-lines output file, read as every reader does (each must be JSON)."""
    lines = list(read_jsonl(path, expected="a JSON value"))
    assert [line.error for line in lines if line.error] == [], path
    return [line.value for line in lines]


def raw_separators(path: Path) -> bool:
    """Whether a file holds all three separators unescaped."""
    text = path.read_text(encoding="utf-8")
    return all(character in text for character in SEPARATORS)
