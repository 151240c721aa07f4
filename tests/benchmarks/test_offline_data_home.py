"""The offline models with no run behind them (`benchmarks.offline.data_home_models`, a mock server of its own) are
read anew for each caller, never kept for the process: data installed into the data home after a first lookup is
answered by the next one, and by a mock server started after it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.offline import DataHomeReplies, data_home_models
from providers.interface import Message
from providers.scripted_replies import MockRequest, NoReply
from tests.runner.engine_support import run_cli


def test_data_installed_after_a_first_lookup_is_answered(natural_plan_data: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("TRIPBENCH_HOME", str(home))
    record = next(iter(json.loads((natural_plan_data / "calendar_scheduling_100.json").read_text()).values()))
    request = MockRequest("openai", "oracle", (Message("user", record["prompt_0shot"]),), None, (), {})
    before, server_before = data_home_models(), DataHomeReplies()
    with pytest.raises(NoReply, match="no installed benchmark's offline model recognises this prompt"):
        before.reply_as("oracle", request)  # the data home holds no Natural Plan file yet
    with pytest.raises(NoReply):
        server_before(request)

    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    assert data_home_models().reply_as("oracle", request) == record["golden_plan"]
    assert DataHomeReplies()(request) == record["golden_plan"]  # a mock server started now answers it too
