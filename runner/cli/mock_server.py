"""`tripbench mock-server`: serve a local OpenAI/Anthropic-compatible LLM with fault injection."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from errors import UserError
from runner.mock_server import MockConfig, load_config, serve

REPLIES = {"echo": None, "oracle": "benchmarks.offline:OracleReplies", "noisy": "benchmarks.offline:NoisyReplies"}
"""`--reply` choices -> the reply function (`module:Class`, one made per server; None: the server's echo)."""


@click.command("mock-server", epilog="""A run reaches it through a [[models]] entry such as `model =
"openai-compatible:mock@http://127.0.0.1:8000/v1"` with `prices = { input = 0.0, output = 0.0 }` (any model name;
or `base_url = "http://127.0.0.1:8000/v1"` on an openai: model). With --reply oracle or noisy, the benchmarks'
prompts get the answers of offline:oracle / offline:noisy, so the run scores like those models, over HTTP (where
a benchmark's answers live in its records, those of the data home).""")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="TCP port; 0 picks a free one.")
@click.option("--reply", type=click.Choice(list(REPLIES)), default=None,
              help="What it answers: echo (the prompt back: every plan fails to parse), oracle (the benchmarks' "
                   "oracle: right answers), noisy (the oracle with injected mistakes). Default: the config's reply "
                   "function, else echo.")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="TOML or JSON file of knobs: latency, faults, rpm/tpm, reply function (see "
                   "runner/mock_server/config.py).")
def mock_server_command(host: str, port: int, reply: str | None, config_path: Path | None) -> None:
    """Serve a local OpenAI/Anthropic-compatible mock LLM until Ctrl-C."""
    config = load_config(config_path) if config_path is not None else MockConfig()
    if reply is not None:
        config = config.model_copy(update={"reply": REPLIES[reply]})
    try:
        asyncio.run(_serve_until_interrupted(host, port, config))
    except KeyboardInterrupt:  # Ctrl-C is how it stops (said so): exit 130 as every command, without "Aborted!"
        raise SystemExit(130) from None


async def _serve_until_interrupted(host: str, port: int, config: MockConfig) -> None:
    try:
        server = await serve(host, port, config)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        click.echo(f"mock LLM server on {server.base_url}")
        click.echo(f"  OpenAI base URL:    {server.openai_base_url}")
        click.echo(f"  Anthropic base URL: {server.base_url}")
        click.echo(f"  tally: {server.base_url}/_tally   (Ctrl-C stops)")
        await asyncio.Event().wait()
    finally:
        await server.close()
        click.echo("mock LLM server stopped", err=True)
