"""Every benchmark's `tripbench evaluate` reads a file of answers within the bounds of every input file
(`datahome.input_files`), through the real CLI: a link to /dev/zero (read until memory ran out) and a file past the
size cap are refused at once, naming the file; a line nested 100,000 deep (a RecursionError traceback when
`evaluate` looked for whose answers a file holds) is a line no benchmark recognises. Never a traceback."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from datahome.input_files import MAX_INPUT_BYTES
from tests.runner.engine_support import run_cli


@pytest.fixture
def hostile(tmp_path: Path) -> dict[str, Path]:
    """A link to /dev/zero, a sparse file one byte past the cap, and a file whose line is 100,000 "[" deep."""
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "\n", encoding="utf-8")
    return {"zero": zero, "huge": huge, "deep": deep}


REFUSED = {"zero": "a character device, not a file: not read", "huge": "larger than 256 MiB"}


def test_natural_plan_refuses_a_device_and_an_oversized_file(hostile: dict[str, Path], natural_plan_data: Path,
                                                               tmp_path: Path) -> None:
    for name, why in REFUSED.items():
        started = time.monotonic()
        done = run_cli("evaluate", str(hostile[name]), "--benchmark", "natural-plan", "--data",
                       str(natural_plan_data), home=tmp_path)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{hostile[name]}: {why}" in done.stderr
        assert time.monotonic() - started < 30


def test_travelplanner_refuses_a_device_and_an_oversized_file(hostile: dict[str, Path], travelplanner_index: Path,
                                                                tmp_path: Path) -> None:
    for name, why in REFUSED.items():
        done = run_cli("evaluate", str(hostile[name]), "--benchmark", "travelplanner", "--index",
                       str(travelplanner_index), home=tmp_path)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{hostile[name]}: {why}" in done.stderr


def test_a_line_nested_too_deeply_is_recognised_by_no_benchmark(hostile: dict[str, Path], tmp_path: Path) -> None:
    done = run_cli("evaluate", str(hostile["deep"]), home=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{hostile['deep']}: no benchmark recognises these answers" in done.stderr
