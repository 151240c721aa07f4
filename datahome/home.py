"""The data home and the places in it: the `--home` option naming it, the LLM cache, the refreshed price table."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

HOME_ENV = "TRIPBENCH_HOME"


def default_home() -> Path:
    """The data home: `$TRIPBENCH_HOME`, else the platform's user-data directory + `/tripbench`.

    Linux and other Unixes follow XDG (`$XDG_DATA_HOME` or `~/.local/share`), macOS uses
    `~/Library/Application Support`, Windows `%LOCALAPPDATA%`.
    """
    if explicit := os.environ.get(HOME_ENV):
        return Path(explicit).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "tripbench"


home_option = click.option("--home", type=click.Path(file_okay=False, path_type=Path), envvar=HOME_ENV,
                           show_envvar=True, help="Data home (default: the user data directory + /tripbench).")
"""The `--home` option of every command that reads or writes the data home (None: `default_home()`)."""


def in_home(name: str, home: str | os.PathLike[str] | None = None) -> Path:
    """`<home>/<name>`; `home` (a `str` from a notebook works as well as a `Path`) defaults to `default_home()`."""
    return (Path(home) if home is not None else default_home()) / name


def default_cache_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """Where the LLM cache lives when a spec or a command names no other: `<home>/cache`."""
    return in_home("cache", home)


def price_table_path(home: str | os.PathLike[str] | None = None) -> Path:
    """The price table `tripbench prices update` writes and every command then reads: `<home>/prices.json`."""
    return in_home("prices.json", home)
