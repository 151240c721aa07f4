"""Per-model output folders: labels whose slugs would clash still get their own folder, found again by reports."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.base import DELIVERED
from reports.collect import collect_run
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.store.outputs import folder_names


def test_folder_names_are_the_slugs_unless_two_clash() -> None:
    names = folder_names(["openai:gpt-4o", "org/toy", "org:toy", "GPT", "gpt"])
    assert names["openai:gpt-4o"] == "openai_gpt-4o"
    assert len({name.casefold() for name in names.values()}) == 5  # also apart on a case-insensitive file system
    assert names["org/toy"].startswith("org_toy-") and names["GPT"].startswith("GPT-")
    assert folder_names(reversed(list(names))) == names  # the same labels, the same names, in any order


def test_a_suffixed_name_that_meets_another_labels_slug_is_suffixed_again() -> None:
    first = folder_names(["a/b", "a:b"])
    names = folder_names(["a/b", "a:b", first["a/b"]])
    assert len(set(names.values())) == 3


async def test_two_models_whose_labels_slug_alike_keep_their_own_files(start_mock_llm, write_spec,
                                                                       tmp_path: Path) -> None:
    server = await start_mock_llm()
    model = f"openai-compatible:toy@{server.base_url}/v1"
    labels = ["org/toy", "org:toy", "toy"]
    models = [{"model": model, "name": label, "prices": {"input": 1.0, "output": 2.0}} for label in labels]
    spec = write_spec(server.base_url, models=models, options={"tasks": 3, "max_calls": 6})
    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)
    assert report.statuses == {DELIVERED: 9}

    folders = sorted(path.parent.parent.name for path in (tmp_path / "run/outputs").glob("*/scripted/submission.jsonl"))
    assert len(folders) == 3 and "toy" in folders  # a label without a clash keeps its plain folder
    trajectories = (tmp_path / "run/outputs").glob("*/scripted/trajectories.jsonl")
    assert all(len(path.read_text().splitlines()) == 3 for path in trajectories)  # nobody's rows were overwritten
    groups = collect_run(tmp_path / "run").groups
    assert sorted(group.model for group in groups) == sorted(labels)
    assert len({group.submission for group in groups}) == 3
    for group in groups:
        tasks = [json.loads(line)["task"] for line in group.submission.read_text().splitlines()]
        assert tasks == ["0", "1", "2"]
