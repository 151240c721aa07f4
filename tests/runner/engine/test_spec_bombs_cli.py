"""Absurd specs are refused up front, with a message naming the field (exit 2): before they fill memory or time."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from tests.runner.engine_support import run_cli

BOMBS = {
    "options nested 500 deep": ("[options]\nx = " + "[" * 500 + "]" * 500 + "\n", "(syntax)"),
    "options nested 40 deep": ("[options]\nx = " + "[" * 40 + "]" * 40 + "\n", "options.x[0]"),
    "a billion samples": ("samples = 1_000_000_000\n", "samples"),
    "a million duplicate task ids": ("tasks = [" + '"1", ' * 1_000_000 + "]\n", "tasks"),
    "too many rollouts": ('strategies = ["scripted", "silent"]\nsamples = 10_000\n', "samples"),
}


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_a_spec_bomb_is_refused_naming_its_field(bomb: str, tmp_path: Path, toy_on_path) -> None:
    text, field = BOMBS[bomb]
    spec = tmp_path / "bomb.toml"
    base = ('benchmark = "tests.runner.toy_benchmark:ToyBenchmark"\nsplit = "train"\n'
            '[[models]]\nmodel = "openai-compatible:toy@http://127.0.0.1:9/v1"\n')
    head, _, tail = text.partition("[options]")
    if "strategies" not in head:
        head += 'strategies = ["scripted"]\n'
    spec.write_text(head + base + ("[options]" + tail if tail else '[options]\ntasks = 1000\n'), encoding="utf-8")
    started = time.monotonic()
    done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--dry-run")
    seconds = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\n{bomb}: exit {done.returncode} in {seconds:.1f} s, peak RSS of any CLI so far {peak_mb:.0f} MB: "
          f"{done.stderr.strip()[:150]}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f": {field}" in done.stderr and "Traceback" not in done.stderr


CONTROL = {  # where in the spec (the top level, the model's table, [options], a table after it), what, the field
    "[team] budget holding NUL": ("tail", '[team]\nurl_env = "TRIPBENCH_TEAM_URL_TEST"\nbudget = "night\\u0000ly"\n',
                                  "team.budget", "'night\\x00ly'"),
    "a model name holding an escape": ("model", 'name = "toy\\u001b[31m"\n', "models[0].name", "'toy\\x1b[31m'"),
    "cache_dir holding a line break": ("top", 'cache_dir = "ca\\nche"\n', "cache_dir", "'ca\\nche'"),
    "an [options] key holding NUL": ("options", '"da\\u0000ta" = 1\n', "options.da\\x00ta",
                                     "a key of printable characters"),
}


@pytest.mark.parametrize("case", list(CONTROL))
def test_a_control_character_in_any_text_of_a_spec_is_refused_naming_its_field(
        case: str, tmp_path: Path, toy_on_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIPBENCH_TEAM_URL_TEST", "postgresql://nobody@/nowhere?host=/nonexistent")
    place, text, field, shown = CONTROL[case]
    parts = {"top": "", "model": "", "options": "", "tail": "", place: text}
    spec = tmp_path / "run.toml"
    spec.write_text('benchmark = "tests.runner.toy_benchmark:ToyBenchmark"\nsplit = "train"\n'
                    f'strategies = ["scripted"]\n{parts["top"]}'
                    f'[[models]]\nmodel = "openai-compatible:toy@http://127.0.0.1:9/v1"\n{parts["model"]}'
                    f'[options]\ntasks = 2\n{parts["options"]}{parts["tail"]}', encoding="utf-8")
    done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"Error: {spec}: {field}: expected " in done.stderr and shown in done.stderr, done.stderr
    assert "\x00" not in done.stderr and "\x1b" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()
