"""The two-stage agent through the OpenAI Batch API gives the results it gives online, at half the price.

The model is the offline oracle behind the mock server, reached as `openai:oracle`: once with every call online and
once with every call in a batch, each run with its own cache so that both really send their calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.benchmarks.travelplanner.offline.conftest import DemoWorld

KEY_ENV = "TRIPBENCH_TEST_BATCH_KEY"
MOCK_REPLY = "benchmarks.offline:DataHomeReplies"  # TravelPlanner's answers need nothing but the prompt


def _spec(path: Path, world: DemoWorld, base_url: str, *, batch: bool) -> Path:
    path.write_text("\n".join([
        'benchmark = "travelplanner"', f'queries = "{world.summary.queries}"', 'strategies = ["two-stage"]',
        "limit = 12", f'cache_dir = "cache-{batch}"', "concurrency = 12", 'evaluate = ["official"]',
        "batch_size = 12", "batch_flush_s = 0.1", "batch_poll_s = 0.02", "",
        "[options]", f'index = "{world.index}"', "",
        "[[models]]", 'name = "oracle"', 'model = "openai:oracle"', f'base_url = "{base_url}"',
        f'api_key_env = "{KEY_ENV}"', f"batch = {str(batch).lower()}", "prices = { input = 0.15, output = 0.60 }",
        ""]), encoding="utf-8")
    return path


def _outcomes(run_dir: Path) -> dict[str, tuple[object, ...]]:
    with load_run(run_dir) as results:
        return {r.key.task: (r.status, r.answer, r.plan, results.steps(r.id)) for r in results.rollouts}


async def test_a_two_stage_run_in_batch_mode_equals_the_same_run_online(
        demo_world: DemoWorld, start_mock_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    server = await start_mock_llm(MockConfig(reply=MOCK_REPLY, batches={"delay_s": 0.01}))
    online = await execute(prepare(_spec(tmp_path / "online.toml", demo_world, server.openai_base_url,
                                         batch=False)), tmp_path / "online", show_progress=False)
    served = server.tally.served
    batched = await execute(prepare(_spec(tmp_path / "batch.toml", demo_world, server.openai_base_url,
                                          batch=True)), tmp_path / "batch", show_progress=False)

    assert online.statuses == batched.statuses and online.statuses["delivered"] == 12
    assert _outcomes(tmp_path / "batch") == _outcomes(tmp_path / "online")
    tally = server.tally
    assert tally.served == served  # the batch run sent nothing online...
    assert tally.batch_served == served and max(tally.batch_requests.values()) == 1  # ...and each call once
    with load_run(tmp_path / "online") as first, load_run(tmp_path / "batch") as second:
        assert second.spent_usd == pytest.approx(first.spent_usd / 2)
