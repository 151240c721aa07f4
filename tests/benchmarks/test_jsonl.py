"""`benchmarks.jsonl`: the one reader of JSON-lines answer files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.jsonl import MAX_NESTING, deeper_than, parse, read_json, read_jsonl
from errors import DataError, MissingInput


def test_lines_end_at_a_line_feed_only_and_bad_lines_say_why(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"a": "x\u2028y\u2029z\u0085"}\r\n'.encode()
                     + b"\n[1,\n" + b'{"n": ' + b"9" * 5000 + b"}\n" + b"[" * 100_000 + b"\n" + b"\xff\n\n")
    lines = list(read_jsonl(path, expected="an object"))
    assert [(line.number, line.value, line.error) for line in lines] == [
        (1, {"a": "x\u2028y\u2029z\u0085"}, None),
        (3, None, "not valid JSON (Expecting value)"),
        (4, None, "not readable JSON (Exceeds the limit (4300 digits) for integer string conversion: value has "
                  "5000 digits)"),
        (5, None, "JSON nested too deeply (more than 64 levels)"),
        (6, None, "not UTF-8 text (invalid start byte at byte 0)"),
    ]
    # paired by position: a blank line between two others holds its place
    assert [line.error for line in read_jsonl(path, expected="an object", positional=True)][1] == \
        "not valid JSON (a blank line)"


@pytest.mark.parametrize("content", [b"", b"\n \n"])
def test_an_empty_file_is_an_error_naming_what_was_expected(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "plans.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataError, match="plans.jsonl: empty: expected one plan per line"):
        list(read_jsonl(path, expected="one plan"))


def test_a_value_nested_past_the_cap_is_a_bad_line_and_one_at_it_is_read() -> None:
    at_cap = "[" * MAX_NESTING + "]" * MAX_NESTING
    assert parse(at_cap) == (json.loads(at_cap), None)
    assert parse('{"a": ' + at_cap + "}") == (None, "JSON nested too deeply (more than 64 levels)")
    assert parse("[" * 100_000) == (None, "JSON nested too deeply (more than 64 levels)")  # past the interpreter's
    assert parse('{"a": ' + at_cap + "}", nesting=None) == ({"a": json.loads(at_cap)}, None)  # the caller checks
    assert not deeper_than({"a": [1, {"b": []}]}, 4) and deeper_than({"a": [1, {"b": [[]]}]}, 4)


def test_a_datasets_json_file_is_read_whole_and_a_bad_one_is_named(tmp_path: Path) -> None:
    good, bad, latin = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "latin.json"
    good.write_text('{"q1": {"answer": "Rome \u2028"}}', encoding="utf-8")
    bad.write_text("{", encoding="utf-8")
    latin.write_bytes(b'{"city": "K\xf6ln"}')
    assert read_json(good) == {"q1": {"answer": "Rome \u2028"}}
    for path in (bad, latin):
        with pytest.raises(DataError, match=rf"^{path}: not a readable JSON file: "):
            read_json(path)
    with pytest.raises(MissingInput, match=rf"^{tmp_path / 'absent.json'}: no such file$"):
        read_json(tmp_path / "absent.json")

