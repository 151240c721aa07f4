"""The README documents what users type: every command and every run spec field (datasette's test_docs idea)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import click
import pytest

from providers.registry import BUILTINS
from runner.cli.main import cli
from runner.engine.spec import ModelSpec, RetrySpec, RunSpec, Sampling

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", cli.list_commands(click.Context(cli)))
def test_every_command_is_in_the_readme(command: str) -> None:
    assert f"`tripbench {command}" in README


@pytest.mark.parametrize("field", sorted({*RunSpec.model_fields, *ModelSpec.model_fields, *Sampling.model_fields,
                                          *RetrySpec.model_fields}))
def test_every_run_spec_field_is_in_the_readmes_example_spec(field: str) -> None:
    spec = README.split("```toml\n", 1)[1].split("```", 1)[0]
    assert re.search(rf"\b{field}\b", spec)


def test_the_first_code_block_is_the_two_setup_commands() -> None:
    block = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split("&& ")[-1] for line in block] == [".venv/bin/tripbench demo", ".venv/bin/python -m pytest -q"]


def test_the_demo_command_compiles_nothing_the_test_command_installs_the_local_model() -> None:
    """The first command is the main job (no llama.cpp build); the second installs what the whole suite needs, and
    `.ci/run` runs exactly that line."""
    demo, tests = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    assert "pip install -q -e . &&" in demo
    assert "'.[dev,local-model]'" in tests
    assert any(package.startswith("llama-cpp-python") for package in extras["local-model"])
    assert not any("llama" in package for package in project["project"]["dependencies"] + extras["dev"])
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "n==2" in ci and 'eval "$test_command"' in ci


def test_the_example_spec_is_a_valid_spec() -> None:
    spec = README.split("```toml\n", 1)[1].split("```", 1)[0]
    assert RunSpec.model_validate(tomllib.loads(spec)).models[1].label == "llama"


def test_the_readme_names_no_path_outside_the_repository() -> None:
    assert "../" not in README  # a reader's clone has no such folder; data beside it is described as such


def test_the_providers_table_says_what_each_provider_record_says() -> None:
    """One row per built-in provider (`providers.registry.BUILTINS`), in their order, its cells read from the record:
    a provider added, dropped or changed without its row fails here."""
    table = README.split("| provider | model string |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")][1:] for line in table]
    yes = {True: "yes", False: "no"}
    assert [[string.split(":")[0].strip("`"), key, batch, priced, transport, adaptive, sdk]
            for string, key, batch, priced, transport, adaptive, sdk in rows] == [
        [provider.prefix, f"`{provider.key_env}`" if provider.key_env else "none", yes[provider.batch],
         yes[provider.priced], f"`{provider.transport}`", yes[provider.adaptive], f"`{provider.sdk}`"]
        for provider in BUILTINS.values()]
