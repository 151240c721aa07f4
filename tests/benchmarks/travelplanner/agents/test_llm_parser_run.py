"""`parser = "llm:MODEL"` in a real run: every answer goes to MODEL with the official extraction prompt, through
the run's gateway (recorded, cached, priced), and the report says which parser produced its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import ConfigError
from reports import build_report
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.store.results import load_run


def spec(folder: Path, data: Path, index: Path, parser: str, extra: str = "") -> Path:
    path = folder / f"{parser.split(':')[0]}.toml"
    path.write_text(f"""benchmark = "travelplanner"
split = "train"
limit = 4
strategies = ["direct"]
cache_dir = "cache"
{extra}
[options]
data_dir = "{data}"
index = "{index}"
parser = "{parser}"

[[models]]
model = "offline:oracle"
prices = {{ input = 0.0, output = 0.0 }}
""", encoding="utf-8")
    return path


async def test_the_llm_parser_sends_every_answer_to_its_model(travelplanner_data: Path, travelplanner_index: Path,
                                                              tmp_path: Path) -> None:
    runs = {}
    for parser in ("rules", "llm:offline:noisy"):
        runs[parser] = tmp_path / parser.replace(":", "_")
        await execute(prepare(spec(tmp_path, travelplanner_data, travelplanner_index, parser)), runs[parser],
                      show_progress=False)
    with load_run(runs["rules"]) as rules, load_run(runs["llm:offline:noisy"]) as llm:
        assert [r.plan for r in rules.rollouts] == [r.plan for r in llm.rollouts]  # the same plans either way
        assert {rules.steps(r.id)[-1]["parse"] for r in rules.rollouts} == {"rules"}
        assert {llm.steps(r.id)[-1]["parse"] for r in llm.rollouts} == {"llm"}
        assert [c.call.model for c in rules.calls()] == ["offline:oracle"] * 4
        assert sorted(c.call.model for c in llm.calls()) == ["offline:noisy"] * 4 + ["offline:oracle"] * 4
    notes = [n for s in build_report([runs["llm:offline:noisy"]], (), "official").sections for n in s.notes]
    assert any("Plans parsed by: llm_offline_noisy: the official extraction prompt sent to offline:noisy" in n
               for n in notes), notes


def test_a_capped_run_needs_a_price_for_the_parser_model_too(travelplanner_data: Path, travelplanner_index: Path,
                                                             tmp_path: Path) -> None:
    path = spec(tmp_path, travelplanner_data, travelplanner_index, "llm:openai-compatible:x@http://models.example.com:9/v1",
                extra="max_cost = 1.0")
    with pytest.raises(ConfigError, match="also calls openai-compatible:x@http://models.example.com:9/v1"):
        prepare(path)
