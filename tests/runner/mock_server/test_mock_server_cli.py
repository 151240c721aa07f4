"""`tripbench mock-server` as a user runs it: a real process, a real port, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

from click.testing import CliRunner

from runner.cli.main import cli

LAUNCH = "from runner.cli.main import main; main()"


def test_serves_until_ctrl_c(tmp_path) -> None:
    config = tmp_path / "mock.toml"
    config.write_text("seed = 1\nrpm = 100\n")
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "mock-server", "--port", "0", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        first_line = process.stdout.readline()
        assert first_line.startswith("mock LLM server on http://127.0.0.1:")
        base_url = first_line.split()[-1]
        with urllib.request.urlopen(f"{base_url}/health", timeout=10) as response:
            assert json.load(response) == {"status": "ok"}
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130
    assert "Traceback" not in stderr and "mock LLM server stopped" in stderr


def test_bad_config_is_one_line_exit_2(tmp_path) -> None:
    config = tmp_path / "mock.toml"
    config.write_text("[latency]\nkind = \"gaussian\"\n")
    result = subprocess.run([sys.executable, "-c", LAUNCH, "mock-server", "--config", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f'Error: {config}: latency.kind: expected one of "fixed", "uniform", "lognormal", got "gaussian"']


def test_help_has_a_one_line_summary() -> None:
    result = CliRunner().invoke(cli, ["mock-server", "--help"])
    assert result.exit_code == 0
    assert "Serve a local OpenAI/Anthropic-compatible mock LLM until Ctrl-C." in result.output
