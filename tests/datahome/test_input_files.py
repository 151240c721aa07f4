"""Files made elsewhere, read within bounds: regular files only, at most `MAX_INPUT_BYTES`, line by line at "\\n";
the same file given twice (by two paths or as a copy) refused, naming both."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from datahome import input_files
from datahome.input_files import (
    MAX_ENTRY_BYTES,
    MAX_INPUT_BYTES,
    distinct_inputs,
    input_chunks,
    input_lines,
    read_input,
)
from errors import DataError, UsageError


def test_a_file_past_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "plans.jsonl"
    with huge.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: nothing written to disk
    started = time.monotonic()
    for read in (read_input, lambda path: list(input_lines(path))):
        with pytest.raises(DataError, match=r"plans.jsonl: larger than 256 MiB, the most an input file may hold"):
            read(huge)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("kind", ["a character device", "a FIFO", "a folder"])
def test_anything_but_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "plans.jsonl"
    if kind == "a character device":
        path.symlink_to("/dev/zero")  # read without end before
    elif kind == "a FIFO":
        os.mkfifo(path)  # opened blocking, it would wait for a writer for ever
    else:
        path.mkdir()
    for read in (read_input, lambda path: list(input_lines(path))):
        with pytest.raises(DataError, match=f"plans.jsonl: {kind}, not a file: not read"):
            read(path)


def test_lines_end_at_a_line_feed_and_a_long_line_comes_whole(tmp_path: Path) -> None:
    path = tmp_path / "plans.jsonl"
    long = b"x" * (3 * input_files.CHUNK_BYTES + 5)
    path.write_bytes("a\u2028\r\n".encode() + long + b"\nlast")
    assert list(input_lines(path)) == ["a\u2028\r\n".encode(), long + b"\n", b"last"]
    assert read_input(path) == path.read_bytes()


def test_a_file_given_twice_is_refused_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, other = tmp_path / "plans_a.jsonl", tmp_path / "plans_b.jsonl"
    first.write_text('{"query_uid": "T1"}\n')
    other.write_text('{"query_uid": "T2"}\n')
    distinct_inputs([first, other])  # two files of the same size, other content
    link = tmp_path / "link.jsonl"
    link.symlink_to(first)
    monkeypatch.chdir(tmp_path)
    for twice in ([first, other, first], [first, link], [first, Path("plans_a.jsonl")]):
        with pytest.raises(UsageError, match=f"{first} and {twice[-1]}: the same file given twice"):
            distinct_inputs(twice)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(first.read_bytes())
    with pytest.raises(UsageError, match=f"{first} and {copy}: the same content in two files"):
        distinct_inputs([first, other, copy])


def test_a_file_read_a_line_at_a_time_may_pass_the_cap_but_no_line_the_entry_cap(tmp_path: Path) -> None:
    path = tmp_path / "plans.jsonl"
    path.write_bytes(b"{}\n" * 4)
    with pytest.raises(DataError, match="larger than 0 MiB"):
        list(input_lines(path, limit=10))
    assert list(input_lines(path, limit=None)) == [b"{}\n"] * 4  # no cap on the file: one line in memory at a time
    with path.open("ab") as handle:
        handle.write(b" " * MAX_ENTRY_BYTES + b"\n")
    with pytest.raises(DataError, match=r"plans.jsonl: line 5 longer than 16 MiB, the most one entry may hold"):
        list(input_lines(path, limit=None))
    assert b"".join(input_chunks(path)) == path.read_bytes()
