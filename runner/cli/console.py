"""The console a command prints its tables and summaries on."""

from __future__ import annotations

import os

from rich.console import Console

LOG_WIDTH = 160
"""Columns when stdout is a file or a pipe (nohup, tee, a CI log), where rich would cut or wrap at 80."""


def output_console() -> Console:
    """stdout's console: the terminal's width; off a terminal, `LOG_WIDTH` columns or a wider `$COLUMNS`.

    A narrower `$COLUMNS` is ignored off a terminal: CI runners export `COLUMNS=80` and a log folded at 80 cuts the
    lines that scripts and readers search for.
    """
    console = Console()
    if console.is_terminal:
        return console
    wanted = os.environ.get("COLUMNS", "")
    return Console(width=max(LOG_WIDTH, int(wanted) if wanted.isdigit() else 0))
