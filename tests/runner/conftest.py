"""Fixtures of the runner tests (engine, store, CLI): a run spec for the toy benchmark against a mock server, and a
loop that fails when blocked."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.runner.engine_support import PROJECT_ROOT, TOY

SLOW_CALLBACK_S = 0.25
"""A callback holding the loop this long fails the test (generous: the test machine is shared and loaded)."""


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # strings, numbers and lists of them are the same in TOML


def spec_text(base_url: str, *, options: dict[str, Any] | None = None, models: list[dict[str, Any]] | None = None,
              **fields: Any) -> str:
    """A toy-benchmark run spec; `models` defaults to one OpenAI-compatible model served by `base_url`."""
    fields = {"benchmark": TOY, "split": "train", "strategies": ["scripted"],
              "cache_dir": "cache", "concurrency": 32, **fields}
    lines = [f"{name} = {toml_value(value)}" for name, value in fields.items()]
    for model in models or [{"model": f"openai-compatible:toy@{base_url}/v1", "name": "toy",
                             "prices": {"input": 1.0, "output": 2.0}}]:
        lines += ["", "[[models]]", *(f"{k} = {toml_value(v)}" for k, v in model.items())]
    lines += ["", "[options]", *(f"{k} = {toml_value(v)}" for k, v in (options or {}).items())]
    return "\n".join(lines) + "\n"


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    """`write_spec(base_url, name="run.toml", **fields)` writes a toy spec into the test's tmp dir."""
    def write(base_url: str, name: str = "run.toml", **fields: Any) -> Path:
        path = tmp_path / name
        path.write_text(spec_text(base_url, **fields), encoding="utf-8")
        return path
    return write


@pytest.fixture
def toy_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Subprocesses find the toy benchmark."""
    monkeypatch.setenv("PYTHONPATH", str(PROJECT_ROOT))


@pytest.fixture
async def strict_loop(caplog: pytest.LogCaptureFixture):
    """asyncio debug mode with a low slow-callback threshold: any callback blocking the loop fails the test."""
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    loop.slow_callback_duration = SLOW_CALLBACK_S
    caplog.set_level(logging.WARNING, logger="asyncio")
    yield loop
    loop.set_debug(False)
    blocked = [r.getMessage() for r in caplog.records if r.name == "asyncio" and " took " in r.getMessage()]
    assert blocked == [], "the event loop was blocked:\n" + "\n".join(blocked)
