"""Commands whose options belong to a benchmark: `tripbench evaluate [--benchmark NAME] ARGS...` runs benchmark
NAME's own `evaluate` command (its `commands` part, `benchmarks.base.Commands`) with ARGS, so the CLI never names a
benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from benchmarks.registry import DEFAULT, available, get_benchmark
from errors import UsageError, UserError


def benchmark_command(benchmark: str, name: str) -> click.Command:
    """Benchmark `benchmark`'s command `name`.

    Raises:
        UserError: no such benchmark, or it has no such command (names those that do).
    """
    found = get_benchmark(benchmark)
    commands = found.commands.by_name() if found.commands is not None else {}
    if name not in commands:
        having = [other for other in available() if other != benchmark
                  and (candidate := get_benchmark(other).commands) is not None and name in candidate.by_name()]
        also = f" ({', '.join(having)} has one)" if having else ""
        scores = (f"; `tripbench evaluate --benchmark {benchmark} FILE` checks each answer's format as it scores it"
                  if name == "check-submission" and "evaluate" in commands else "")
        raise UsageError(f"benchmark {benchmark} has no `{name}` command{scores or also}")
    return commands[name]


def run_benchmark_command(benchmark: str, name: str, args: list[str], prog_name: str,
                          choose: str | None = None) -> None:
    """Runs the benchmark's command with `args`; its `--help` also says how to choose the benchmark: `choose`, the
    command line that does (default: `PROG_NAME --benchmark NAME ...`)."""
    command = benchmark_command(benchmark, name)
    asks_help = any(arg in ("-h", "--help") for arg in args)
    command.main(args, prog_name=prog_name, standalone_mode=False, help_option_names=["-h", "--help"])
    if asks_help:
        click.echo(f"\n  {choose or f'{prog_name} --benchmark NAME ...'}: the command of another benchmark "
                   f"({', '.join(available())}; default {DEFAULT}).")


def answers_benchmark(args: Sequence[str], *, strict: bool = True) -> str:
    """The benchmark whose answers a file among `args` holds (`Commands.holds_answers`; the first file some benchmark
    recognises, an option's value such as a query file being another); the default benchmark when no file is named
    or one is empty (`--help`, a missing or empty file: its command says what is wrong).

    Args:
        args: The command's arguments.
        strict: Whether a file no benchmark recognises is an error; else the default benchmark takes it (a
            submission being checked may be broken: its checker says how).

    Raises:
        UserError: no benchmark recognises any of the files (exit 1, `strict`), or several recognise one.
    """
    files = [Path(arg) for arg in args if not arg.startswith("-") and Path(arg).is_file()]
    if not files or any(_blank(path) for path in files):  # the default's command says what is wrong (an empty file)
        return DEFAULT
    scorers = {other: commands for other in available()
               if (commands := get_benchmark(other).commands) is not None and "evaluate" in commands.by_name()}
    for path in files:
        matching = [other for other, commands in scorers.items() if commands.holds_answers(path)]
        if len(matching) == 1:
            return matching[0]
        if matching:
            raise UserError(f"{path}: answers of {' or '.join(matching)}? choose with --benchmark NAME")
    if not strict:
        return DEFAULT
    raise UserError(f"{files[0]}: no benchmark recognises these answers ({', '.join(scorers)} looked; each one's "
                    "`tripbench evaluate --benchmark NAME -h` says what it reads); --benchmark NAME scores it anyway")


def _blank(path: Path) -> bool:
    with open(path, "rb") as file:
        return not file.read(1 << 16).strip()


def dispatching(name: str, summary: str) -> click.Command:
    """A command `name` that forwards its arguments to the chosen benchmark's command of that name (`evaluate`
    without --benchmark: the benchmark whose answers the file holds)."""

    @click.command(name, help=summary, add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.option("--benchmark", default=None, metavar="NAME",
                  help=f"The benchmark whose command runs (default: {DEFAULT}"
                       + ("; evaluate: the one whose answers FILE holds)." if name == "evaluate" else ")."))
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(benchmark: str | None, args: tuple[str, ...]) -> None:
        if benchmark is None:  # answers are recognised (check-submission: a broken one is the default's to check)
            benchmark = (answers_benchmark(args, strict=name == "evaluate")
                         if name in ("evaluate", "check-submission") else DEFAULT)
        run_benchmark_command(benchmark, name, list(args), f"tripbench {name}")

    return command


evaluate_command = dispatching("evaluate", "Score a file of answers with a benchmark's evaluator.")
check_submission_command = dispatching("check-submission", "Check a submission's format for a benchmark's "
                                                           "leaderboard.")
tool_command = dispatching("tool", "Run one of a benchmark's tool actions and print what the agent would see.")
