"""The console a command prints its tables and summaries on."""

from __future__ import annotations

import os

from rich.console import Console

LOG_WIDTH = 160
"""Columns when stdout is a file or a pipe (nohup, tee, a CI log), where rich would cut or wrap at 80."""


def output_console() -> Console:
    """stdout's console: the terminal's width (or `$COLUMNS`, when set), else `LOG_WIDTH` columns."""
    console = Console()
    return console if console.is_terminal or os.environ.get("COLUMNS") else Console(width=LOG_WIDTH)
