"""The `tripbench` command group: wiring only, each command lives in its own module."""

from __future__ import annotations

import sys

import click

from runner.cli.cache import cache_command
from runner.cli.data import data_command
from runner.cli.demo import demo_command
from runner.cli.evaluate import check_submission_command, evaluate_command
from runner.cli.mock_server import mock_server_command
from runner.cli.report import report_command
from runner.cli.run import run_command, status_command
from runner.cli.tool import tool_command
from runner.errors import UserError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tripbench")
def cli() -> None:
    """Run LLM agents on travel-planning benchmarks at scale."""


cli.add_command(mock_server_command)
cli.add_command(run_command)
cli.add_command(status_command)
cli.add_command(report_command)
cli.add_command(cache_command)
cli.add_command(data_command)
cli.add_command(demo_command)
cli.add_command(evaluate_command)
cli.add_command(tool_command)
cli.add_command(check_submission_command)


def main() -> None:
    """Console entry point: user errors print one line, Ctrl-C exits 130, neither shows a traceback."""
    try:
        sys.exit(cli.main(standalone_mode=False) or 0)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
