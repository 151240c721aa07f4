"""A Gaode server that refuses now and then (a key at its QPS limit, a passing 429 or 500) gives the scores a quiet
one gives: `tripbench evaluate --distance amap` asks a failed call again before a distance counts as failed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.benchmarks.traveleval.evaluation import plans
from tests.benchmarks.traveleval.evaluation.gaode_fake import HOSTILE, GaodeFake, healthy
from tests.runner.engine_support import run_cli

KEY = "test-key-123"
PASSING = {0: "QPS refusal", 1: "HTTP 429", 5: "HTTP 500"}
"""Calls (by number) refused in passing; each is asked again."""


@pytest.fixture
def gaode() -> Iterator[GaodeFake]:
    with GaodeFake().running() as fake:
        yield fake


def evaluate(data_dir: Path, folder: Path, plan_file: Path) -> dict[str, object]:
    """The plan's result with a data folder of its own (its own answer cache) over the staged data."""
    folder.mkdir()
    for part in ("data", "database", "traveleval.sqlite"):
        (folder / part).symlink_to(data_dir / part)
    done = run_cli("evaluate", str(plan_file), "--benchmark", "traveleval", "--json", "--data-dir", str(folder),
                   "--distance", "amap")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    return result


def test_refusals_in_passing_give_the_scores_of_a_quiet_server(data_dir: Path, gaode: GaodeFake, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMAP_API_KEY", KEY)
    monkeypatch.setenv("AMAP_API_URL", gaode.url)
    monkeypatch.setenv("AMAP_INTERVAL", "0")
    plan = plans.plan()
    plan["query_uid"] = "T0201"
    plan_file = tmp_path / "plans.jsonl"
    plan_file.write_text(json.dumps(plan, ensure_ascii=False) + "\n", encoding="utf-8")
    quiet = evaluate(data_dir, tmp_path / "quiet", plan_file)
    assert quiet["metrics"]["space"]["RP"] > 0 and "distance_failures" not in quiet  # type: ignore[index]
    calls = len(gaode.asked)
    gaode.asked.clear()
    gaode.reply = lambda query, number: HOSTILE[PASSING[number]](query, number) if number in PASSING \
        else healthy(query, number)
    busy = evaluate(data_dir, tmp_path / "busy", plan_file)
    assert busy["metrics"] == quiet["metrics"] and "distance_failures" not in busy
    assert len(gaode.asked) == calls + len(PASSING)
