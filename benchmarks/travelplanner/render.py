"""pandas `DataFrame.to_string()` reproduced without pandas, byte for byte (docs/fidelity/travelplanner.md §3).

Every table the official TravelPlanner code shows to an LLM is a DataFrame rendered by pandas with default
display options: the agent's observations and notebook use `to_string(index=False)` (docs/fidelity/travelplanner.md §3,
§4.5), the restaurant tables of `reference_information` keep the CSV row labels (`to_string()`,
docs/fidelity/travelplanner.md §1.2). The rules below follow pandas 2.x `pandas/io/formats/format.py`
(`DataFrameFormatter`, `FloatArrayFormatter`, `_IntArrayFormatter`, `_GenericArrayFormatter`, `_trim_zeros_float`) for
the cases a `Frame` can hold: int64, float64 (never NaN: the official tables are `dropna()`ed) and str columns under a
flat column index. `tests/benchmarks/travelplanner/test_render.py` checks the equivalence against real pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox_index import Frame

# display.precision (6 digits after the point, then trailing zeros trimmed per column).
_PRECISION = 6
_SMALL = 10.0**-_PRECISION
# pprint_thing(escape_chars=("\t", "\r", "\n")): control characters are shown escaped, one cell per line.
_ESCAPES = str.maketrans({"\t": "\\t", "\r": "\\r", "\n": "\\n"})
_NUMERIC = frozenset({"int", "float"})


def to_string(frame: Frame, *, index: bool = False) -> str:
    """Render `frame` exactly as pandas' `DataFrame.to_string(index=index)` does with default options.

    Args:
        frame: the rows to render; `frame.dtypes` decides the cell format ('int', 'float' or 'str').
        index: show the row labels (`frame.index`) in a left-justified first column, as `to_string()`.

    Returns:
        The table text without a trailing newline; `Empty DataFrame` text when there are no rows.
    """
    if not frame.rows:
        return _empty(frame.columns)
    columns = [
        _column(name, dtype, [row[j] for row in frame.rows], index)
        for j, (name, dtype) in enumerate(zip(frame.columns, frame.dtypes, strict=True))
    ]
    if index:
        labels = [str(label) for label in frame.index]
        width = max(map(len, labels))
        # The row labels are left-justified under an empty header cell (`_get_formatted_index`).
        columns.insert(0, [" " * width] + [label.ljust(width) for label in labels])
    # `adjoin(1, ...)`: every column is already padded to one width, so one space joins them.
    return "\n".join(" ".join(line) for line in zip(*columns))


@lru_cache(maxsize=4096)
def table_text(frame: Frame) -> str:
    """`to_string(frame)`, rendered once: an agent renders a table when a search returns it, again to mask it in its
    scratchpad, and again in the notebook it hands the Planner, and every sample of a query searches alike. A Frame
    is hashed and compared in C, in a fraction of its rendering's time."""
    return to_string(frame)


def records(frame: Frame) -> list[dict[str, Any]]:
    """The rows as `{column: value}` dicts, as `DataFrame.to_dict(orient="records")` (and the JSON files)."""
    return [dict(zip(frame.columns, row, strict=True)) for row in frame.rows]


def _column(name: str, dtype: str, values: list[Any], leading_space: bool) -> list[str]:
    """Header plus cells of one column, right-justified to a common width."""
    if dtype == "float":
        cells = format_floats(values, leading_space=leading_space)
    elif dtype == "int":
        cells = [f"{value: d}" if leading_space else f"{value:d}" for value in values]
    else:
        cells = [str(value) for value in values]
        if any(char in "".join(cells) for char in "\t\r\n"):  # rare: test the column once, not each cell
            cells = [cell.translate(_ESCAPES) for cell in cells]
        if leading_space:
            cells = [" " + cell for cell in cells]
    # Numeric column labels get a leading space (`_get_formatted_column_labels`), visible when the
    # label is wider than the cells: `DestCityName  Distance`.
    header = name.translate(_ESCAPES)
    if dtype in _NUMERIC:
        header = " " + header
    width = max(len(header), max(map(len, cells)))
    return [header.rjust(width)] + [cell.rjust(width) for cell in cells]


def format_floats(values: Sequence[float], *, leading_space: bool = False) -> list[str]:
    """Cells of a float64 column as `FloatArrayFormatter` writes them (unpadded).

    Fixed notation with 6 decimals, then as many trailing zeros removed from every cell as all of them
    have (keeping one digit after the point): `42.277324`, `1030.0`. Scientific notation when a non-zero
    value is below 1e-6 in magnitude, or when a cell is longer than 12 characters and a value exceeds 1e6.
    `leading_space` (pandas passes `index=True` here) formats positive values with a space for the sign.

    Args:
        values: the column's values (ints are formatted as floats, as in a float64 column).
        leading_space: the sign-space flag of the `{: .6f}` format.

    Returns:
        One string per value.
    """
    sign = " " if leading_space else ""
    cells = _trim_zeros([f"{value:{sign}.{_PRECISION}f}" for value in values])
    magnitudes = [abs(value) for value in values]
    too_long = max(map(len, cells)) > _PRECISION + 6
    if any(0 < m < _SMALL for m in magnitudes) or (too_long and any(m > 1e6 for m in magnitudes)):
        cells = _trim_zeros([f"{value:{sign}.{_PRECISION}e}" for value in values])
    return cells


def _is_decimal(cell: str) -> bool:
    # pandas tests `^\s*[\+-]?[0-9]+\.[0-9]*$`; of the cells formatted above, exactly the fixed-notation ones
    # of finite values pass it (scientific ones contain "e", `inf` and `nan` no point).
    return "." in cell and "e" not in cell


def _trim_zeros(cells: list[str]) -> list[str]:
    """`_trim_zeros_float`: drop the trailing zeros every decimal cell shares, leave one after the point."""
    decimal = [_is_decimal(cell) for cell in cells]
    if not any(decimal):
        return cells
    # pandas trims one character per round while *all* decimal cells end in "0"; the rounds it makes
    # equal the fewest trailing zeros among them (a cell stops at its point, which is never a "0").
    rounds = min(len(cell) - len(cell.rstrip("0")) for cell, is_decimal in zip(cells, decimal) if is_decimal)
    trimmed = [cell[: len(cell) - rounds] if is_decimal else cell for cell, is_decimal in zip(cells, decimal)]
    return [cell + "0" if cell.endswith(".") else cell for cell in trimmed]


def _empty(columns: Sequence[str]) -> str:
    """What pandas prints for a frame without rows (`StringFormatter._empty_info_line`)."""
    names = ", ".join(name.translate(_ESCAPES) for name in columns)
    return f"Empty DataFrame\nColumns: [{names}]\nIndex: []"
