"""The typed record of a stored spec: what a run writes reads back whole, an older run's spec reads as it ran."""

from __future__ import annotations

from runner.engine.spec import parse_spec
from runner.store.stored_spec import StoredModel, StoredSpec


def test_a_runs_stored_spec_reads_back_as_the_spec_said() -> None:
    spec = parse_spec({
        "benchmark": "tests.runner.toy_benchmark:ToyBenchmark", "split": "train", "strategies": ["direct", "loop"],
        "samples": 2, "max_cost": 5, "batch": True, "evaluate": ["strict"], "options": {"tasks": 3},
        "sampling": {"temperature": 0.5},
        "models": [{"model": "openai:gpt-4o-mini", "name": "mini", "batch": False, "max_tokens": 64},
                   {"model": "openai-compatible:toy@https://user:secret@example.com/v1", "seed": 7}],
    }, "run.toml")
    stored = StoredSpec.of(spec.public_dump())
    assert (stored.benchmark, stored.split, stored.strategies, stored.samples, stored.max_cost, stored.evaluate,
            dict(stored.options)) == ("tests.runner.toy_benchmark:ToyBenchmark", "train", ("direct", "loop"), 2, 5.0,
                                      ("strict",), {"tasks": 3})
    assert stored.labels == ["mini", "openai-compatible:toy@https://example.com/v1"]  # no credential kept
    # a model's own batch wins over the run's
    assert stored.batched == frozenset({"openai-compatible:toy@https://example.com/v1"})
    assert stored.models[0].sampling["max_tokens"] == 64 and stored.models[1].sampling["seed"] == 7
    # `[sampling]`'s temperature is each entry's, though the dumped entries hold `temperature: null`
    assert [model.sampling["temperature"] for model in stored.models] == [0.5, 0.5]


def test_an_older_runs_spec_reads_with_what_its_absent_settings_meant() -> None:
    old = StoredSpec.of({"benchmark": "travelplanner", "sampling": {"temperature": 0.0},
                         "models": [{"model": "openai:gpt-4o"}, "not a model"]})
    assert (old.samples, old.max_cost, old.evaluate, old.strategies, old.batch, old.batched) == (
        1, None, (), (), False, frozenset())
    assert old.models == (StoredModel("openai:gpt-4o", sampling={"temperature": 0.0}),)
    assert StoredSpec.of(None) == StoredSpec.of({}) == StoredSpec()


def test_a_model_that_batched_only_the_planners_calls_is_not_all_batched() -> None:
    # its other calls went online: an open charge of one that joined no batch may have been billed
    # (`never_sent_charges` of the results writer releases only those of models every call of which was batched)
    spec = parse_spec({
        "benchmark": "tests.runner.toy_benchmark:ToyBenchmark", "split": "train", "strategies": ["scripted"],
        "batch": "planner",
        "models": [{"model": "openai:gpt-4o-mini"}, {"model": "openai:gpt-4o", "batch": True}],
    }, "run.toml")
    stored = StoredSpec.of(spec.public_dump())
    assert (stored.batch, stored.models[0].batch) == ("planner", None)
    assert stored.batched == frozenset({"openai:gpt-4o"})
