"""Every public function taking a path accepts a plain `str`, as notebooks pass, and returns what a `Path` gives."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.travelplanner.dataset import find_split_file
from cache import load_request
from datahome import default_cache_dir, price_table_path
from reports import build_report, write_report
from reports.collect import collect_run
from runner.mock_server import load_config
from sandbox_index import BuildSummary, Sandbox, build_travelplanner_index, open_sandbox, travelplanner_index_path


@dataclasses.dataclass(frozen=True, slots=True)
class Inputs:
    data: Path
    index: Path
    run: Path
    tmp: Path


Convert = Callable[[Path], str | Path]


def _seen(sandbox: Sandbox) -> tuple[Path, dict[str, str]]:
    with sandbox:
        return sandbox.path, sandbox.metadata()


def _untimed(summary: BuildSummary) -> BuildSummary:
    """The summary without what differs between two builds of the same files: the clock."""
    metadata = {k: v for k, v in summary.metadata.items() if k not in ("built_at", "build_seconds")}
    return dataclasses.replace(summary, seconds=0.0, metadata=metadata)


CASES: dict[str, Callable[[Inputs, Convert], object]] = {
    "find_split_file": lambda i, p: find_split_file(p(i.data), "train"),
    "collect_run": lambda i, p: collect_run(p(i.run)),
    "build_report": lambda i, p: build_report([p(i.run)], compare=[p(i.run)]),
    "write_report": lambda i, p: write_report(build_report([i.run]), p(i.tmp / "report")),
    "open_sandbox": lambda i, p: _seen(open_sandbox(p(i.index))),
    "build_travelplanner_index": lambda i, p: _untimed(build_travelplanner_index(p(i.data / "database"),
                                                                                 p(i.tmp / "index.sqlite"))),
    "travelplanner_index_path": lambda i, p: travelplanner_index_path(p(i.tmp)),
    "default_cache_dir": lambda i, p: default_cache_dir(p(i.tmp)),
    "price_table_path": lambda i, p: price_table_path(p(i.tmp)),
    "load_request": lambda i, p: load_request(p(i.tmp / "request.json")),
    "load_config": lambda i, p: load_config(p(i.tmp / "mock.toml")),
}


@pytest.fixture
def inputs(travelplanner_data: Path, travelplanner_index: Path, train_runs: dict[str, Path],
           tmp_path: Path) -> Inputs:
    first = (travelplanner_data / "queries" / "train.jsonl").read_text(encoding="utf-8").splitlines()[0]
    query = json.loads(first)["query"]
    (tmp_path / "request.json").write_text(json.dumps({"model": "offline:oracle",
                                                       "messages": [{"role": "user", "content": query}]}))
    (tmp_path / "mock.toml").write_text("seed = 7\nrpm = 600\n")
    return Inputs(travelplanner_data, travelplanner_index, train_runs["agents"], tmp_path)


@pytest.mark.parametrize("name", CASES)
def test_a_str_path_gives_what_a_path_gives(name: str, inputs: Inputs) -> None:
    call = CASES[name]
    assert call(inputs, str) == call(inputs, Path)
