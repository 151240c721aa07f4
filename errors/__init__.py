"""User-facing errors: printed as one message by the CLI, never as a traceback; and `Interruption`, the mark of
whatever stops a rollout from tripbench's own side."""

from __future__ import annotations


class UserError(Exception):
    """A mistake the user can fix; the CLI prints `str(self)` and exits with `exit_code`."""

    exit_code = 1


class UsageError(UserError):
    """A command or spec names something the tool does not have (a benchmark, split, provider, model) or leaves out
    what it needs: nothing ran, exit code 2 (the README's rule for usage and spec errors)."""

    exit_code = 2


class ConfigError(UsageError):
    """A bad setting: names the file, the field, what was expected and what was found."""

    def __init__(self, path: str, field: str, expected: str, got: object = None) -> None:
        self.path, self.field, self.expected, self.got = path, field, expected, got
        message = f"{path}: {field}: expected {expected}"
        if got is not None:  # a TOML or JSON boolean as the file wrote it, not Python's True
            message += f", got {str(got).lower() if isinstance(got, bool) else repr(got)}"
        super().__init__(message)


class DataError(UserError):
    """Bad or missing input data: names the file (and line, where known) and what is wrong."""


class MissingInput(DataError, UsageError):
    """An input the command was pointed at (a file, a folder, a run directory, data not fetched yet) is not there:
    nothing ran, exit code 2 like any usage error; the message names the path and, where one exists, the command
    that makes it."""


class Interruption(Exception):
    """tripbench's own machinery, not the strategy nor the model, stopped a rollout: a team database that cannot be
    reached, a shared service restarting, a worker that was stopped. Such a rollout has no result: it is stored as
    `interrupted` and the same command runs it again (`runner.outcomes`).

    `retry_after_s` is set while the cause may pass on its own (an outage still within its limit): whoever can wait
    (a cache read, the spend cap) tries again after that many seconds; None means give up now.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
