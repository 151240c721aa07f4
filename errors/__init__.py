"""User-facing errors: printed as one message by the CLI, never as a traceback."""

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
