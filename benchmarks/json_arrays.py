"""A JSON array read an item at a time (the official TravelEval plans files): memory holds a chunk of the text and
one item, never the whole file, so a file of a gigabyte is read in the memory of a few plans.

Python's own rules, as `benchmarks.jsonl.parse` (NaN and Infinity are read); the text must be one array and nothing
after it but whitespace. An item is decoded by `json.JSONDecoder.raw_decode` from a buffer that grows a chunk at a
time while the item is incomplete, up to `max_item_chars`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.jsonl import MAX_NESTING, too_deep

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER_GOES_ON = re.compile(r"[0-9.eE+\-]*")
"""What may follow a number decoded at the end of a chunk and belong to it (`-0` of `-0.5`, `12` of `12e3`)."""


class NotAnArray(Exception):
    """The text is not one JSON array: invalid JSON, cut short, an item past the cap, or text after the array."""


def array_items(chunks: Iterable[str], max_item_chars: int) -> Iterator[Any]:
    """The items of the JSON array `chunks` (the text, in pieces of any size) hold, one at a time.

    Raises:
        NotAnArray: why the text is not one JSON array, as a message (`not valid JSON (Expecting value)`), when the
            reading gets there: the items before it have been given.
    """
    reader = _Reader(iter(chunks))
    if reader.next_char() != "[":
        raise NotAnArray("not valid JSON (expected an array)")
    reader.pos += 1
    if reader.next_char() == "]":
        reader.pos += 1
    else:
        while True:
            yield reader.value(max_item_chars)
            separator = reader.next_char()
            reader.pos += 1
            if separator == "]":
                break
            if separator != ",":
                raise NotAnArray("not valid JSON (cut short)" if separator is None else
                                 "not valid JSON (Expecting ',' delimiter)")
    if reader.next_char() is not None:
        raise NotAnArray("not valid JSON (Extra data)")


class _Reader:
    """The text between `pos` and the end of the chunks read so far, and more of it on demand."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self.chunks = chunks
        self.text = ""
        self.pos = 0
        self.ended = False
        self.decoder = json.JSONDecoder()

    def more(self) -> bool:
        """Appends the next chunk (dropping what was read); False at the end of the text."""
        chunk = next(self.chunks, None)
        if chunk is None:
            self.ended = True
            return False
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        return True

    def next_char(self) -> str | None:
        """The next character after whitespace (`pos` then points at it), None at the end of the text."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return None

    def value(self, max_chars: int) -> Any:
        """The JSON value at `pos` (after whitespace), `pos` moved past it."""
        self.next_char()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if len(self.text) - self.pos > max_chars:
                    raise NotAnArray(f"an item longer than {max_chars:,} characters, the most one may hold") from None
                if not self.more():
                    raise NotAnArray(f"not valid JSON ({exc.msg})") from None
                continue
            except RecursionError:  # nested beyond the interpreter's recursion limit (about 1,000 levels)
                raise NotAnArray(too_deep(MAX_NESTING)) from None
            except ValueError as exc:  # the interpreter's integer-conversion limit (sys.get_int_max_str_digits)
                raise NotAnArray(f"not readable JSON ({str(exc).split(';')[0]})") from None
            if not self.ended and _NUMBER_GOES_ON.fullmatch(self.text, end) and self.more():
                continue  # a number may go on in the next chunk: decoded again with it
            self.pos = end
            return value
