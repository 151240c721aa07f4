"""Run specs: every mistake names the file, the field and what was expected; expansion is stable."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from errors import ConfigError, UserError
from providers.prices import bundled_table
from runner.cli.main import cli
from runner.engine.execute import execute
from runner.engine.expand import expand, select_tasks
from runner.engine.prepared import prepare
from runner.engine.spec import load_spec, parse_spec
from runner.store.records import RolloutKey
from tests.runner.engine_support import TOY, run_cli
from tests.runner.toy_benchmark import ToyBenchmark, ToyOptions

BASE = f"""benchmark = "{TOY}"
split = "train"
strategies = ["scripted"]

[[models]]
model = "openai-compatible:a@http://127.0.0.1:9/v1"

[[models]]
model = "openai-compatible:b@http://127.0.0.1:9/v1"
"""


@pytest.mark.parametrize(("edit", "message"), [
    (("[[models]]\nmodel = \"openai-compatible:b", "[[models]]\ntemperature = \"hot\"\nmodel = \"openai-compatible:b"),
     'run.toml: models[1].temperature: expected a number >= 0 and <= 2, got "hot"'),
    (("split = \"train\"", "split = \"train\"\nsamples = 0"),
     "run.toml: samples: expected an integer >= 1 and <= 10000, got 0"),
    (("split = \"train\"", "split = \"train\"\nconcurency = 3"), "run.toml: concurency: expected one of the fields "),
    (("split = \"train\"", "split = \"train\"\ncache = \"sometimes\""),
     'run.toml: cache: expected one of "readwrite", "replay", "refresh", "off", got "sometimes"'),
    (("split = \"train\"", "split = \"train\"\nqueries = \"q.jsonl\""),
     "run.toml: (top level): expected exactly one of split and queries"),
    (("strategies = [\"scripted\"]", "strategies = \"scripted\""),
     'run.toml: strategies: expected a list of strings, got "scripted"'),
    (("split = \"train\"", "split = \"train\"\nsampling = { top_p = 2 }"),
     "run.toml: sampling.top_p: expected a number > 0 and <= 1, got 2"),
    (("model = \"openai-compatible:a@http://127.0.0.1:9/v1\"",
      "model = \"openai-compatible:a@http://127.0.0.1:9/v1\"\nprices = { input = 1 }"),
     "run.toml: models[0].prices.output: expected a number >= 0 (required)"),
    (("model = \"openai-compatible:a@http://127.0.0.1:9/v1\"",
      "model = \"openai-compatible:a@http://127.0.0.1:9/v1\"\nprices = \"together_ai:no-such-model\""),
     "run.toml: models[0].prices: expected a price table entry (`tripbench prices show TEXT` lists them), "
     'got "together_ai:no-such-model"'),
    ((f"benchmark = \"{TOY}\"\n", ""), "run.toml: benchmark: expected a string (required)"),
    (("model = \"openai-compatible:a@http://127.0.0.1:9/v1\"",
      "model = \"openai-compatible:a@http://127.0.0.1:9/v1\"\nconcurrency = \"fast\""),
     'run.toml: models[0].concurrency: expected an integer >= 1 or "auto", got "fast"'),
    (("model = \"openai-compatible:a@http://127.0.0.1:9/v1\"",
      "model = \"openai-compatible:a@http://127.0.0.1:9/v1\"\nconcurrency = 0"),
     'run.toml: models[0].concurrency: expected an integer >= 1 or "auto", got 0'),
    (("model = \"openai-compatible:a@http://127.0.0.1:9/v1\"",
      "model = \"openai-compatible:a@http://127.0.0.1:9/v1\"\nconcurrency = 4\nmax_rollouts = 4"),
     "run.toml: models[0]: expected concurrency (deprecated) or max_rollouts and adaptive_calls, not both"),
    # a misspelt required key is also a missing one: the misspelling is named, with the likely key
    (("strategies = ", "strategie = "),
     "run.toml: strategie: expected one of the fields batch, batch_flush_s, batch_poll_s, batch_round_s, batch_size, "
     "benchmark, "),
    (("strategies = ", "strategie = "), "(did you mean strategies?)"),
])
def test_spec_errors_name_file_field_and_expectation(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE.replace(*edit, 1), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_spec(path)
    text = str(caught.value).replace(str(tmp_path) + "/", "")
    assert text.startswith(message) if message.startswith("run.toml") else message in text


def test_bad_toml_and_a_missing_file_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("benchmark = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml: \(syntax\): expected valid TOML"):
        load_spec(tmp_path / "bad.toml")
    with pytest.raises(ConfigError, match=r"nope\.toml: \(file\): expected a readable TOML file"):
        load_spec(tmp_path / "nope.toml")


def test_benchmark_options_and_strategies_are_checked_by_the_benchmark(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE + "\n[options]\ntasks = \"many\"\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"run\.toml: options\.tasks: expected"):
        prepare(path)
    path.write_text(BASE.replace('["scripted"]', '["scripted", "clever"]'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"strategies\[1\]: expected one of scripted, silent, got 'clever'"):
        prepare(path)
    path.write_text(BASE.replace(TOY, "no_such_module:Thing"), encoding="utf-8")
    with pytest.raises(UserError, match="cannot import no_such_module"):
        prepare(path)


def test_the_cli_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE.replace("split = \"train\"", "split = \"train\"\nsamples = -1"), encoding="utf-8")
    done = run_cli("run", str(path))
    assert done.returncode == 2
    assert done.stderr.strip() == f"Error: {path}: samples: expected an integer >= 1 and <= 10000, got -1"


def test_expansion_is_stable_and_honours_subset_and_limit() -> None:
    spec = parse_spec({"benchmark": "toy", "split": "train", "strategies": ["scripted", "silent"], "samples": 2,
                       "tasks": ["4", "1", "3"], "limit": 2, "models": [{"model": "x:a"}, {"model": "x:b"}]}, "s")
    tasks = select_tasks(spec, ToyBenchmark().load_tasks("train", ToyOptions(tasks=6)), "s")
    keys = expand(spec, tasks, "toy")
    assert [t.id for t in tasks] == ["4", "1"]
    assert keys[:5] == [RolloutKey("toy", "train", "4", "x:a", "scripted", 0),
                        RolloutKey("toy", "train", "4", "x:a", "scripted", 1),
                        RolloutKey("toy", "train", "4", "x:a", "silent", 0),
                        RolloutKey("toy", "train", "4", "x:a", "silent", 1),
                        RolloutKey("toy", "train", "4", "x:b", "scripted", 0)]
    assert len(keys) == len(set(keys)) == 2 * 2 * 2 * 2
    assert expand(spec, tasks, "toy") == keys
    with pytest.raises(ConfigError, match="tasks: expected ids present in the split, got '9'"):
        select_tasks(spec.model_copy(update={"tasks": ["9"]}), tasks, "s")


async def test_status_summarises_a_run(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, strategies=["scripted", "silent"], max_cost=5.0,
                      options={"tasks": 6, "max_calls": 3, "crash_task": "3"})
    await execute(prepare(spec), tmp_path / "run", show_progress=False)

    result = CliRunner().invoke(cli, ["status", str(tmp_path / "run")], terminal_width=200)

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"run {tmp_path / 'run'}: completed · 1 session(s) since ")
    assert "of a $5.00 cap" in lines[0]
    scripted = next(line for line in lines if "scripted" in line).split()
    assert scripted[:6] == ["toy", "│", "scripted", "│", "6/6", "│"] and "crashed" in scripted
    with pytest.raises(UserError, match="not a tripbench run directory"):
        CliRunner().invoke(cli, ["status", str(tmp_path)], catch_exceptions=False)


def test_a_spend_cap_needs_a_price_for_every_model(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    remote = BASE.replace("http://127.0.0.1:9/v1", "https://llm.example.com/v1")  # a local server costs 0 untold
    path.write_text(remote.replace('split = "train"', 'split = "train"\nmax_cost = 2.0'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"run\.toml: models\[0\]\.prices: expected a price table .* the price "
                                          r"table does not know openai-compatible:a@"):
        prepare(path)


def test_an_openai_compatible_model_takes_its_price_from_a_table_entry(tmp_path: Path) -> None:
    entry = "together_ai:meta-llama/Llama-3.3-70B-Instruct-Turbo"  # a hosted server behind an OpenAI-compatible URL
    path = tmp_path / "run.toml"
    text = BASE.replace('split = "train"', 'split = "train"\nmax_cost = 2.0')
    for name in "ab":
        text = text.replace(f'model = "openai-compatible:{name}@http://127.0.0.1:9/v1"',
                            f'model = "openai-compatible:{name}@http://127.0.0.1:9/v1"\nprices = "{entry}"')
    path.write_text(text, encoding="utf-8")
    prepared = prepare(path)  # the cap is satisfied: both models are priced
    assert [model.prices for model in prepared.spec.models] == [bundled_table().models[entry]] * 2
    assert bundled_table().models[entry].rates() == (1.04, 1.04, 1.04)  # LiteLLM's figures, USD per million tokens


def test_auto_concurrency_is_the_default_of_openai_compatible_servers_only(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE + 'concurrency = 4\n\n[[models]]\nmodel = "openai:gpt-4o-mini"\n\n'
                    '[[models]]\nmodel = "anthropic:claude-haiku-4-5"\nconcurrency = "auto"\n', encoding="utf-8")
    models = load_spec(path).models
    assert [(m.adaptive, m.rollout_bound) for m in models] == [(True, None), (False, 4), (False, None), (True, None)]


def test_rollouts_and_calls_in_flight_are_two_settings_and_concurrency_still_reads_as_both(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE + '\n[[models]]\nmodel = "openai:gpt-4o-mini"\nmax_rollouts = 4\n\n'
                    '[[models]]\nmodel = "openai-compatible:c@http://127.0.0.1:9/v1"\nmax_rollouts = 8\n\n'
                    '[[models]]\nmodel = "openai-compatible:d@http://127.0.0.1:9/v1"\nadaptive_calls = false\n\n'
                    '[[models]]\nmodel = "anthropic:claude-haiku-4-5"\nadaptive_calls = true\n\n'
                    '[[models]]\nmodel = "openai-compatible:e@http://127.0.0.1:9/v1"\nconcurrency = 2\n',
                    encoding="utf-8")
    spec = load_spec(path)
    assert [(m.adaptive, m.rollout_bound) for m in spec.models] == [
        (True, None), (True, None), (False, 4), (True, 8), (False, None), (True, None), (False, 2)]
    dumped = spec.public_dump()["models"]  # the new fields are stored only when set: older runs' specs unchanged
    assert ["max_rollouts" in model for model in dumped] == [False, False, True, True, False, False, False]
    assert [model["concurrency"] for model in dumped] == [None] * 6 + [2]

