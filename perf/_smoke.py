"""The `--smoke` flag every perf script takes: the script's own small sizes, so a run takes seconds and a figure
quoted in a note can always be measured again (`tests/test_perf_scripts.py` runs every script with it)."""

from __future__ import annotations

import argparse
from typing import Any


def parse_args(parser: argparse.ArgumentParser, **smoke: Any) -> argparse.Namespace:
    """Adds `--smoke` to `parser` and parses the command line; with `--smoke`, the arguments named in `smoke` take
    those values (over the defaults and over what the command line said)."""
    sizes = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in smoke.items())
    parser.add_argument("--smoke", action="store_true", help=f"a smoke size, seconds: {sizes}")
    args = parser.parse_args()
    if args.smoke:
        for name, value in smoke.items():
            setattr(args, name, value)
    return args
