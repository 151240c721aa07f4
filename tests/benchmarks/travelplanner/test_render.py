"""render.to_string against real pandas: every per-city table the tools return, and generated edge cases."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.travelplanner import render
from benchmarks.travelplanner.render import format_floats, records, to_string
from sandbox_index import Frame

DTYPES = {"i": "int", "f": "float", "O": "str"}

# table -> (file, city column, the columns the official tool keeps, in its order: docs/fidelity/travelplanner.md §1.1)
TABLES = {
    "restaurants": ("restaurants/clean_restaurant_2022.csv", "City",
                    ["Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"]),
    "accommodations": ("accommodations/clean_accommodations_2022.csv", "city",
                       ["NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
                        "review rate number", "city"]),
    "attractions": ("attractions/attractions.csv", "City",
                    ["Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"]),
}


def frame_of(df: pd.DataFrame) -> Frame:
    """A Frame holding exactly what `df` holds (labels, dtypes, Python values)."""
    rows = tuple(tuple(v.item() if hasattr(v, "item") else v for v in row)
                 for row in df.itertuples(index=False, name=None))
    return Frame(tuple(df.columns), tuple(DTYPES[d.kind] for d in df.dtypes), tuple(int(i) for i in df.index), rows)


def assert_same(df: pd.DataFrame, frame: Frame) -> None:
    for index in (False, True):
        assert to_string(frame, index=index) == df.to_string(index=index), f"index={index}"


@pytest.fixture(scope="module")
def official_tables(travelplanner_data: Path) -> dict[str, pd.DataFrame]:
    """Each table as the official tool loads it: `pd.read_csv(path).dropna()[columns]`."""
    database = travelplanner_data / "database"
    return {name: pd.read_csv(database / file).dropna()[columns] for name, (file, _, columns) in TABLES.items()}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_city_table_renders_as_pandas(sandbox, official_tables, table: str) -> None:
    """The agent sees `to_string(index=False)`; reference_information shows restaurants with row labels."""
    df, city_column = official_tables[table], TABLES[table][1]
    with_labels = (False, True) if table == "restaurants" else (False,)
    groups = list(df.groupby(city_column, sort=False))
    mismatches = [
        (city, index)
        for city, expected in groups
        for index in with_labels
        if to_string(getattr(sandbox, table)(city), index=index) != expected.to_string(index=index)
    ]
    assert mismatches == []
    assert len(groups) >= 280  # cities with at least one row


def test_every_flight_table_renders_as_pandas(sandbox, travelplanner_data: Path) -> None:
    flights = pd.read_csv(travelplanner_data / "database/flights/clean_Flights_2022.csv").dropna()
    groups = flights.groupby(["OriginCityName", "DestCityName", "FlightDate"], sort=False)
    mismatches = [key for key, expected in groups
                  if to_string(sandbox.flights(*key)) != expected.to_string(index=False)]
    assert mismatches == []
    assert groups.ngroups == 572  # (origin, destination, date) triples in the staged flights table


@pytest.mark.parametrize("table", sorted(TABLES))
def test_whole_tables_render_as_pandas(official_tables, table: str) -> None:
    """Thousands of rows: widths taken over the whole column, labels up to four digits."""
    assert_same(official_tables[table], frame_of(official_tables[table]))


def _frame(columns: dict[str, list], index: list[int] | None = None) -> pd.DataFrame:
    data = {}
    for name, values in columns.items():
        if all(isinstance(v, str) for v in values):
            data[name] = pd.Series(values, dtype=object)
        else:
            data[name] = pd.Series(values, dtype="float64" if any(isinstance(v, float) for v in values) else "int64")
    df = pd.DataFrame(data)
    if index is not None:
        df.index = index
    return df


EDGE_CASES = {
    "many_digits": {"x": [42.2773242, -89.08814249999999, 0.1 + 0.2]},
    "whole_floats": {"price": [1030.0, 210.0, 75.0]},
    "shared_trailing_zeros": {"x": [1.5, 2.25, 3.125]},
    "tiny_scientific": {"x": [1e-07, 1.5, 0.0]},
    "tiny_boundary": {"x": [1e-06, 9.99e-07, 2.0]},
    "small_fixed": {"x": [1e-05, 0.5]},
    "large_short": {"x": [1e6 + 0.5, 2.0]},
    "large_long": {"x": [123456789.123, 1.0]},
    "huge": {"x": [1e16, 1e22, -3.5]},
    "negative_zero": {"x": [-0.0, 0.0, -1.25]},
    "only_negative": {"x": [-1.0, -22.5]},
    "ints": {"n": [0, -7, 123456789012, 5]},
    "int64_extremes": {"n": [2**63 - 1, -(2**63)]},
    "wide_header": {"a very long column name": [1], "another long header": [2.5], "s": ["x"]},
    "empty_and_spaces": {"s": ["", "  lead", "trail  ", " "]},
    "control_characters": {"s": ["tab\there", "new\nline", "carriage\rreturn", "plain"]},
    "east_asian_and_emoji": {"s": ["北京饭店", "😀 emoji", "é", "Ａ"], "n": [1, 22, 333, 4444]},
    "numeric_looking_text": {"s": ["-5", "1.0", "1e-07", "NaN"]},
    "long_text": {"s": ["x" * 300, "short"], "f": [1.0, 2.0]},
    "quotes": {"s": ["q'\"", "'", '"'], "n": [1, 2, 3]},
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases_render_as_pandas(case: str) -> None:
    df = _frame(EDGE_CASES[case])
    assert_same(df, frame_of(df))


@pytest.mark.parametrize("index", [[0], [9, 10], [12345, 7, 100000], [3, 2, 1]])
def test_row_labels_are_left_justified_as_pandas(index: list[int]) -> None:
    df = _frame({"Name": ["a", "bb", "ccc"][: len(index)], "Average Cost": [1, 22, 333][: len(index)]}, index)
    assert_same(df, frame_of(df))


@pytest.mark.parametrize("seed", range(40))
def test_random_frames_render_as_pandas(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        n = rng.randint(1, 6)
        scale = 10.0 ** rng.randint(-9, 9)
        floats = [rng.choice([rng.uniform(-1, 1) * scale, float(rng.randint(-99, 99)), 0.0]) for _ in range(n)]
        ints = [rng.randint(-(10 ** rng.randint(0, 12)), 10 ** rng.randint(0, 12)) for _ in range(n)]
        texts = ["".join(rng.choice("ab Z-1.é北\t") for _ in range(rng.randint(0, 12))) for _ in range(n)]
        df = _frame({"f": floats, "Average Cost": ints, "s": texts}, rng.sample(range(10 ** rng.randint(1, 5) + n), n))
        assert_same(df, frame_of(df))


def test_empty_frame_renders_as_pandas() -> None:
    df = pd.DataFrame({"Name": pd.Series([], dtype=object), "Price": pd.Series([], dtype="int64")})
    assert_same(df, frame_of(df))


def test_format_floats_trims_zeros_per_column() -> None:
    assert format_floats([1030.0, 210.5]) == ["1030.0", "210.5"]
    assert format_floats([1.0]) == ["1.0"]
    assert format_floats([2.0, 1e-07]) == ["2.000000e+00", "1.000000e-07"]
    assert format_floats([0.5], leading_space=True) == [" 0.5"]


def test_records_are_the_rows_as_dicts(sandbox) -> None:
    frame = sandbox.flights("St. Petersburg", "Rockford", "2022-03-16")
    assert records(frame) == [dict(zip(frame.columns, row, strict=True)) for row in frame.rows]
    assert records(frame)[0]["Flight Number"] == "F3573659"


def test_render_runs_without_pandas() -> None:
    """pandas is a dev dependency only: the modules that render must not import it."""
    package = Path(render.__file__).parent
    for path in [package / "render.py", package / "reference.py", *(package / "tools").glob("*.py")]:
        module = path.name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not {name for name in imported if name.split(".")[0] in ("pandas", "numpy")}, module
