"""Files we write: replaced whole (a link at the target replaced, not followed; a failed write leaves the old file),
and CSV cells a spreadsheet would run as a formula neutralised as OWASP advises."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from datahome.output_files import inert, replace_atomically, write_csv


def test_text_that_starts_like_a_formula_is_quoted_and_numbers_stay_numbers() -> None:
    for formula in ("=HYPERLINK(\"http://x\",\"y\")", "+1", "-1+1", "@SUM(A1)", "\tx", "\rx"):
        assert inert(formula) == "'" + formula
    assert [inert(value) for value in ("T0201", "a=b", "", -0.5, -3, None)] == ["T0201", "a=b", "", -0.5, -3, None]


def test_a_csv_file_holds_inert_cells_and_empty_ones_for_none(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "rows.csv", ["query_id", "=x"], [["=cmd|' /C calc'!A0", None], ["T1", -1.5]])
    with path.open(encoding="utf-8", newline="") as handle:
        assert list(csv.reader(handle)) == [["query_id", "'=x"], ["'=cmd|' /C calc'!A0", ""], ["T1", "-1.5"]]


def test_a_link_at_the_target_is_replaced_and_what_it_points_to_kept(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "rows.csv"
    target.symlink_to(victim)
    write_csv(target, ["a"], [[1]])
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_bytes() == b"a\r\n1\r\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["rows.csv", "victim.txt"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "rows.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError), replace_atomically(target) as handle:
        handle.write("half")
        raise RuntimeError("the disk is full")
    assert target.read_text() == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["rows.csv"]
