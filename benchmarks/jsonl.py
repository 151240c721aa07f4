"""JSON-lines answer files (submissions, plans, answers), read one way by every benchmark; and a dataset's one JSON
file read whole (`read_json`).

A line ends at "\\n" and nowhere else. JSON strings may hold U+2028, U+2029 and U+0085 raw (orjson writes them so, as
a run's own `submission.jsonl` does), and `str.splitlines()` cuts a line at each of them: a plan holding one became
two lines that are not JSON. The file is read a line at a time, so a large one is never held whole, and within the
bounds of every input file (`datahome.input_files`: a regular file of at most 256 MiB). A line that cannot be read
(not UTF-8, not JSON, nested deeper than `MAX_NESTING`, a number too long to convert) is kept with why, never
raised: every other line still counts, and the caller reports the bad one where its result would be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datahome.input_files import MAX_INPUT_BYTES, input_lines
from errors import DataError, MissingInput

MAX_NESTING = 64
"""A JSON value nested deeper than this (arrays and objects within each other) is a bad line. The deepest answer of
any benchmark is a TravelEval plan, about 8 levels; 64 leaves room for what a model adds and stays far below what
the code that walks a plan recursively (validation, scoring, flattening, orjson's 255 levels when a run stores it)
can take."""


@dataclass(frozen=True, slots=True)
class Line:
    """One non-blank line of a JSON-lines file."""

    number: int
    """1-based, counting blank lines."""
    value: Any = None
    """The parsed JSON (None when `error` is set)."""
    error: str | None = None
    """Why the line is not JSON, e.g. `not valid JSON (Expecting value)`."""


def parse(text: str, nesting: int | None = MAX_NESTING) -> tuple[Any, str | None]:
    """`text` as JSON, or (None, why it is not).

    Python's own rules (NaN and Infinity are read, as the official tools write them); a value nested deeper than
    `nesting` levels (None: a whole file whose entries the caller checks, `deeper_than`) or than the interpreter's
    recursion limit, or an integer past its 4,300-digit conversion limit, is a bad line, not a crash.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    except RecursionError:  # nested beyond the interpreter's recursion limit (about 1,000 levels)
        return None, too_deep(MAX_NESTING if nesting is None else nesting)
    except ValueError as exc:  # the interpreter's integer-conversion limit (sys.get_int_max_str_digits)
        return None, f"not readable JSON ({str(exc).split(';')[0]})"
    # a text of no more brackets than `nesting` cannot nest deeper: most answers are never walked
    if nesting is not None and text.count("[") + text.count("{") > nesting and deeper_than(value, nesting):
        return None, too_deep(nesting)
    return value, None


def deeper_than(value: Any, levels: int) -> bool:
    """Whether `value` nests arrays and objects more than `levels` deep (a scalar is 0 levels, `[]` 1, `[{}]` 2);
    walked a level at a time, without recursion, stopping past `levels`."""
    level = [value]
    for _ in range(levels + 1):
        containers = [item for item in level if isinstance(item, dict | list)]
        if not containers:
            return False
        level = [inner for item in containers for inner in (item.values() if isinstance(item, dict) else item)]
    return True


def too_deep(levels: int) -> str:
    """The error of a value nested deeper than `levels`."""
    return f"JSON nested too deeply (more than {levels} levels)"


def read_jsonl(path: Path, *, expected: str, positional: bool = False,
               limit: int | None = MAX_INPUT_BYTES) -> Iterator[Line]:
    """Every non-blank line of the file at `path`, parsed, in order.

    Args:
        path: The file.
        expected: What each line holds, for the message about an empty file (e.g. `one FinalTravelPlan object`).
        positional: Lines are paired with queries by their position (TravelPlanner's submissions): a blank line
            between two others holds a position and comes as a bad line; blank lines before the first and after
            the last are skipped, as everywhere.
        limit: The file's size at most (`input_lines`); None: any size, each line at most `MAX_ENTRY_BYTES`.

    Raises:
        DataError: The file cannot be opened or read, is no regular file or too large (`datahome.input_files`),
            or holds no line at all.
    """
    found = False
    blanks: list[int] = []
    for number, raw in enumerate(input_lines(path, limit), start=1):
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark some editors write
        if not raw.strip():
            blanks += [number] * (positional and found)
            continue
        found = True
        yield from (Line(blank, error="not valid JSON (a blank line)") for blank in blanks)
        blanks.clear()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Line(number, error=f"not UTF-8 text ({exc.reason} at byte {exc.start})")
            continue
        value, error = parse(text)
        yield Line(number, value, error)
    if not found:
        raise DataError(f"{path}: empty: expected {expected} per line")


def read_json(path: Path) -> Any:
    """A dataset's JSON file, parsed whole.

    Raises:
        MissingInput: no such file.
        DataError: a file that is not UTF-8 JSON (names the file and why).
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingInput(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file: {exc}") from None
