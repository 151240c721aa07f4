"""`[retry]` in a run spec: validated, handed to the gateway's retrier, out of every cache key and the resume check."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED, PROVIDER_ERROR
from errors import ConfigError
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.engine.spec import RetrySpec, load_spec
from runner.ladder.retry import RetryPolicy
from runner.store.results import load_run

BASE = """benchmark = "tests.runner.toy_benchmark:ToyBenchmark"
split = "train"
strategies = ["scripted"]

[[models]]
model = "openai-compatible:a@http://127.0.0.1:9/v1"

[retry]
"""

OPTIONS = {"tasks": 1, "max_calls": 1}
"""One rollout of one call."""


def test_the_spec_sets_every_field_of_the_retry_policy_with_its_defaults() -> None:
    assert set(RetrySpec.model_fields) == {f.name for f in fields(RetryPolicy)}
    assert RetrySpec().policy() == RetryPolicy()


@pytest.mark.parametrize(("setting", "message"), [
    ("max_attempts = 0", "retry.max_attempts: expected an integer >= 1, got 0"),
    ("max_attempts = 1.5", "retry.max_attempts: expected an integer >= 1, got 1.5"),
    ("max_attempts = true", "retry.max_attempts: expected an integer >= 1, got true"),
    ("base_delay_s = 0", "retry.base_delay_s: expected a number > 0, got 0"),
    ('max_delay_s = "long"', 'retry.max_delay_s: expected a number > 0, got "long"'),
    ("max_retry_after_s = inf", "retry.max_retry_after_s: expected a number > 0, got Infinity"),
    ("attempts = 3", "retry.attempts: expected one of the fields base_delay_s, max_attempts, max_delay_s, "
                     "max_retry_after_s (did you mean max_attempts?)"),
])
def test_a_bad_retry_setting_names_the_file_field_and_expectation(tmp_path: Path, setting: str, message: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE + setting + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_spec(path)
    assert str(caught.value) == f"{path}: {message}"


async def test_max_attempts_1_sends_one_request_and_a_resume_may_retry_from_the_same_cache(
        start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    once = write_spec(server.base_url, name="once.toml", options=OPTIONS, retry={"max_attempts": 1})
    patient = write_spec(server.base_url, name="patient.toml", options=OPTIONS)  # the default policy
    run_dir = tmp_path / "run"

    server.plan.fail_next(500)
    report = await execute(prepare(once), run_dir, show_progress=False)
    assert report.statuses == {PROVIDER_ERROR: 1} and server.tally.requests == 1  # no retry

    server.plan.fail_next(500)
    report = await execute(prepare(patient), run_dir, show_progress=False)  # other retries: no --force needed
    assert report.rerun == {PROVIDER_ERROR: 1} and report.statuses == {DELIVERED: 1}
    assert server.tally.requests == 1 + 2  # the 500, then the retry's answer
    with load_run(run_dir) as results:
        assert [r.retries for r in results.rollouts] == [1]

    report = await execute(prepare(once), tmp_path / "again", show_progress=False)  # same cache, other retries
    assert report.statuses == {DELIVERED: 1} and server.tally.requests == 3
    with load_run(tmp_path / "again") as results:
        assert all(r.cache_hits == r.calls == 1 for r in results.rollouts)
