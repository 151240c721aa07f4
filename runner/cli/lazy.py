"""A click group that imports a command's module only when that command is asked for (click's LazyGroup pattern).

Importing every command up front cost each `tripbench` call most of a second (the demo, the reports package,
the provider SDKs), also `tripbench --help` and the commands that need none of it.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import click


class LazyCommand(NamedTuple):
    target: str
    """`module:attribute` of the click command."""
    summary: str
    """The first paragraph of the command's help: what the group's help lists, so listing imports nothing."""


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; its own help lists them from their summaries."""

    def __init__(self, *args: Any, lazy_commands: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:  # a typo: say what was meant
            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            meant = f"; did you mean '{near[0]}'?" if near else ""
            ctx.fail(f"No such command '{name}'{meant} (`{ctx.command_path} --help` lists them)")
        return super().resolve_command(ctx, args)

    def _load(self, cmd_name: str) -> click.Command:
        module, _, attribute = self.lazy_commands[cmd_name].target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy_commands[cmd_name].target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Each summary whole, wrapped onto more lines, never cut mid-phrase at the column width (click's default).
        listed = [(name, self.commands[name] if name in self.commands
                   else click.Command(name, help=self.lazy_commands[name].summary))
                  for name in self.list_commands(ctx)]
        rows = [(name, command) for name, command in listed if not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit=10_000)) for name, command in rows])
