"""The `tripbench` command group: wiring only, each command lives in its own module, imported when it runs."""

from __future__ import annotations

import io
import signal
import sys
import traceback
from types import TracebackType

import click

from errors import UserError
from errors.redaction import redact_secrets
from runner.cli.lazy import LazyCommand, LazyGroup

COMMANDS = {
    "cache": LazyCommand("runner.cli.cache:cache_command", "Inspect and prune the cache of LLM calls."),
    "check-submission": LazyCommand("runner.cli.dispatch:check_submission_command",
                                    "Check a submission's format for a benchmark's leaderboard."),
    "compare": LazyCommand("runner.cli.compare:compare_command",
                           "Compare two runs pair by pair: the same task and sample in both, with paired tests and "
                           "intervals."),
    "data": LazyCommand("runner.cli.data:data_command", "Fetch, import and inspect benchmark data in the data home."),
    "demo": LazyCommand("runner.cli.demo:demo_command",
                        "Run the full pipeline on generated worlds with offline models: no download, no API key."),
    "evaluate": LazyCommand("runner.cli.dispatch:evaluate_command",
                            "Score a file of answers with a benchmark's evaluator."),
    "import-plans": LazyCommand("runner.cli.import_plans:import_plans_command",
                                "Store answers made outside tripbench (the official generator's "
                                "plans_<model>_<strategy>.json files, or JSONL) as a scored run, which `tripbench "
                                "report RUN_DIR` reports like any other."),
    "list": LazyCommand("runner.cli.listing:list_command",
                        "List benchmarks, their splits and strategies (what each does), and the models the bundled "
                        "price table knows."),
    "mock-server": LazyCommand("runner.cli.mock_server:mock_server_command",
                               "Serve a local OpenAI/Anthropic-compatible mock LLM until Ctrl-C."),
    "pack": LazyCommand("runner.cli.pack:pack_command",
                        "Write a run into one file: its spec and identity, provenance, results and exactly the cache "
                        "entries its rollouts used, compressed, every part under a sha256 (`tripbench replay FILE` "
                        "re-executes it for $0)."),
    "prices": LazyCommand("runner.cli.prices:prices_command",
                          "Show the price table, or refresh it from LiteLLM's maintained list."),
    "replay": LazyCommand("runner.cli.pack:replay_command",
                          "Re-execute every rollout of a pack with every call answered from the pack alone (no API "
                          "key, no network, no cache folder), then compare with the pack's results: exit 0 when "
                          "identical, 1 listing the differences."),
    "report": LazyCommand("runner.cli.report:report_command",
                          "Write the report of a run (also one still going): pass rates, errors, cost, plots, "
                          "per-rollout drill-down."),
    "run": LazyCommand("runner.cli.run:run_command",
                       "Run (or resume) every rollout of a run spec: results go to RUN_DIR/results.sqlite as they "
                       "finish."),
    "status": LazyCommand("runner.cli.run:status_command",
                          "Summarise a run directory: state, rollouts done per model and strategy, statuses, calls and "
                          "money."),
    "team": LazyCommand("runner.cli.team:team_command",
                        "Set up and inspect the team database: one cache, spend cap and rate limits for many "
                        "processes."),
    "tool": LazyCommand("runner.cli.dispatch:tool_command",
                        "Run one of a benchmark's tool actions and print what the agent would see."),
}
"""Every command, imported only when it is run; a summary is its docstring's first paragraph (a test compares)."""


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tripbench")
def cli() -> None:
    """Run LLM agents on travel-planning benchmarks at scale."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _show_crash(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
    """A bug's traceback, as Python prints it but with no secret (`errors.redaction`): a message may hold one."""
    sys.stderr.write(redact_secrets("".join(traceback.format_exception(kind, exc, trace))))


def main() -> None:
    """Console entry point: user errors and unusable paths print one line, Ctrl-C and SIGTERM exit 130; none shows a
    traceback. Whatever it prints about an error (a bug's traceback too) passes through `errors.redaction` first."""
    # SIGTERM is Ctrl-C from the first instant (a run replaces this with its graceful stop while rollouts run), not
    # the end of the process by the signal, which a supervisor would read as a crash.
    signal.signal(signal.SIGTERM, _interrupt)
    sys.excepthook = _show_crash
    try:
        sys.exit(cli.main(standalone_mode=False) or 0)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except click.ClickException as exc:  # a bad flag's value is echoed: it may be one
        shown = io.StringIO()
        exc.show(file=shown)
        click.echo(redact_secrets(shown.getvalue()), err=True, nl=False)
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"Error: {redact_secrets(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # a path that cannot be made, read or written (under a file, /proc, no permission, full)
        click.echo(f"Error: {redact_secrets(path_problem(exc))}", err=True)
        sys.exit(UserError.exit_code)


def path_problem(exc: OSError) -> str:
    """`PATH: what is wrong` for an operating-system error, naming the path(s) it was about."""
    paths = " -> ".join(str(name) for name in (exc.filename, exc.filename2) if name is not None)
    return f"{paths}: {exc.strerror or exc}" if paths else str(exc)


if __name__ == "__main__":  # `python -m runner.cli.main`, as the console script
    main()
