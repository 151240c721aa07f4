"""A JSON array read an item at a time: the same items as `json.loads` in chunks of any size, and what is not one
array refused with why."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from benchmarks.json_arrays import NotAnArray, array_items

TEXT = '[\n  {"a": [1, 2.5e3, "x,]"]},\n  12345678,\n  "tail \\" ]",\n  true, null, NaN, -0.5, [], {}\n]\n'


def pieces(text: str, size: int) -> Iterator[str]:
    return (text[start:start + size] for start in range(0, len(text), size))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_the_items_are_those_of_the_whole_text_whatever_the_chunks(size: int) -> None:
    """A number, a string or a literal cut between two chunks is read whole, never as its first part."""
    items = list(array_items(pieces(TEXT, size), max_item_chars=100))
    expected = json.loads(TEXT)
    assert len(items) == len(expected) and items[:5] == expected[:5] and items[6:] == expected[6:]
    assert items[5] != items[5]  # NaN, as Python's json reads it


@pytest.mark.parametrize(("text", "why"), [
    ('[{"a": 1}, {"b": 2}', "not valid JSON (cut short)"),
    ('[{"a": 1}, {"b": ', "not valid JSON (Expecting value)"),
    ('[{"a": 1} {"b": 2}]', "not valid JSON (Expecting ',' delimiter)"),
    ('[{"a": 1}] [', "not valid JSON (Extra data)"),
    ('{"a": 1}', "not valid JSON (expected an array)"),
    ("[" * 5000 + "]" * 5000, "JSON nested too deeply"),
    ('[{"a": "' + "x" * 30_000 + '"}]', "an item longer than 20,000 characters"),
])
def test_what_is_not_one_array_is_refused_with_why(text: str, why: str) -> None:
    with pytest.raises(NotAnArray, match=why.replace("(", r"\(").replace(")", r"\)")):
        list(array_items(pieces(text, 16), max_item_chars=20_000))


def test_the_items_before_a_fault_are_given_first() -> None:
    items = array_items(pieces('[{"a": 1}, {"b": 2}, oops]', 4), max_item_chars=100)
    assert [next(items), next(items)] == [{"a": 1}, {"b": 2}]
    with pytest.raises(NotAnArray):
        next(items)
    assert list(array_items(["  [ ]  "], max_item_chars=10)) == []
