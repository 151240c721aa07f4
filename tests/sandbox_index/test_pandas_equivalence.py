"""The index holds exactly what the official code's `pd.read_csv(path).dropna()` holds (docs/fidelity/travelplanner.md
§1.1, §12.1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from sandbox_index import Sandbox, schema
from sandbox_index.csv_semantics import scan_csv, typed_rows

_PANDAS_KIND = {"i": "int", "f": "float", "O": "str"}


def _read_official(database: Path, source: schema.SourceTable) -> pd.DataFrame:
    frame = pd.read_csv(database / source.file)
    return frame.dropna() if source.dropna else frame


def _stored(index: Path, source: schema.SourceTable) -> tuple[list[int], list[tuple[object, ...]]]:
    with sqlite3.connect(index) as conn:
        found = conn.execute(f"SELECT * FROM {source.table} ORDER BY row_label").fetchall()
    conn.close()
    return [row[0] for row in found], [tuple(row[1:]) for row in found]


@pytest.mark.parametrize("source", schema.CSV_TABLES, ids=lambda s: s.table)
def test_rows_labels_and_values_equal_pandas(
    source: schema.SourceTable, travelplanner_data: Path, travelplanner_index: Path
) -> None:
    expected = _read_official(travelplanner_data / "database", source)
    labels, rows = _stored(travelplanner_index, source)
    assert labels == expected.index.tolist()
    selected = (
        expected[list(source.columns)].astype(object).where(expected[list(source.columns)].notna(), None)
    )
    assert rows == [tuple(row) for row in selected.itertuples(index=False, name=None)]


# (table, Sandbox call, pandas mask of the official tool): docs/fidelity/travelplanner.md §3.1-§3.5 and §2.
LOOKUPS = [
    ("flights", lambda s: s.flights("St. Petersburg", "Rockford", "2022-03-16"),
     lambda df: (df.OriginCityName == "St. Petersburg") & (df.DestCityName == "Rockford")
     & (df.FlightDate == "2022-03-16")),
    ("flights", lambda s: s.flights_by_number("F3573120"), lambda df: df["Flight Number"] == "F3573120"),
    ("accommodations", lambda s: s.accommodations("Rockford"), lambda df: df.city == "Rockford"),
    ("restaurants", lambda s: s.restaurants("Rockford"), lambda df: df.City == "Rockford"),
    ("attractions", lambda s: s.attractions("Rockford"), lambda df: df.City == "Rockford"),
    ("restaurants", lambda s: s.match_restaurants("Fly", "Rockford"),
     lambda df: (df.City == "Rockford") & df.Name.astype(str).str.contains("Fly", regex=False)),
    ("attractions", lambda s: s.match_attractions("Museum", "Rockford"),
     lambda df: (df.City == "Rockford") & df.Name.astype(str).str.contains("Museum", regex=False)),
    ("accommodations", lambda s: s.match_accommodations("", "Rockford"), lambda df: df.city == "Rockford"),
    ("accommodations", lambda s: s.match_accommodations("Pure luxury one bdrm + sofa bed on Central Park",
                                                        "Rockford", exact=True),
     lambda df: (df.city == "Rockford") & (df.NAME == "Pure luxury one bdrm + sofa bed on Central Park")),
]  # fmt: skip


@pytest.mark.parametrize(("table", "lookup", "mask"), LOOKUPS)
def test_lookup_equals_pandas_filter(
    table: str, lookup: object, mask: object, travelplanner_data: Path, sandbox: Sandbox
) -> None:
    source = next(s for s in schema.CSV_TABLES if s.table == table)
    official = pd.read_csv(travelplanner_data / "database" / source.file)
    kept = official.dropna()
    expected = kept[mask(kept)][list(source.columns)]  # type: ignore[operator]
    frame = lookup(sandbox)  # type: ignore[operator]
    assert len(frame) == len(expected) > 0
    assert frame.columns == source.columns
    # The dtype pandas infers on the FULL column (before dropna) decides the rendering (`131.0`).
    assert frame.dtypes == tuple(_PANDAS_KIND[official[c].dtype.kind] for c in source.columns)
    assert frame.index == tuple(expected.index)
    assert list(frame.rows) == list(expected.astype(object).itertuples(index=False, name=None))
    for row in frame.rows:
        assert [type(v).__name__ for v in row] == list(frame.dtypes)


def test_accommodations_without_house_rules_vanish(sandbox: Sandbox) -> None:
    meta = sandbox.metadata()
    # docs/fidelity/travelplanner.md §1.1: 5,047 rows, 4,285 survive dropna()
    assert meta["rows.accommodations"] == "4285"
    assert int(meta["rows.accommodations"]) + int(meta["dropped.accommodations"]) == 5047
    assert meta["rows.restaurants"] == "9551" and meta["rows.distances"] == "17602"


def test_embedded_newlines_survive(travelplanner_data: Path, travelplanner_index: Path) -> None:
    expected = pd.read_csv(travelplanner_data / "database" / schema.ACCOMMODATIONS.file)
    multiline = expected[expected["NAME"].astype(str).str.contains("\n")]
    assert len(multiline) == 13
    labels, rows = _stored(travelplanner_index, schema.ACCOMMODATIONS)
    stored = {label: row for label, row in zip(labels, rows, strict=True)}
    for label, name in multiline["NAME"].items():
        if label in stored:
            assert stored[label][0] == name


@pytest.mark.parametrize(
    "text",
    [
        "a,b,c,d\n1,2.5,x,\n3,4,y,NA\n",  # float with missing, int column with a float literal
        "a,b,c\n 7 ,1e3,None\n+8,-inf,null\n",  # whitespace around ints, exponent, infinity, NA strings
        "a,b,c\n1,,#N/A\n2,,n/a\n",  # an all-missing column is float
        ',x,y\n0,1_0,"multi\nline"\n\n1,5,z\n',  # unnamed index, underscore is text, blank line skipped
        'a,b\r\n1,"NA"\r\n2,"x, y"\r\n',  # CRLF (another distance.csv copy has it), quoted NA
        "a,b\n9223372036854775807,1.\n-3,.5\n",  # int64 bound, float literals without digits on a side
        "a,b\n\u0663,1\n4,\u0662.5\n",  # Arabic-Indic digits are text to pandas
    ],
)
def test_inference_matches_pandas_on_edge_cases(text: str, tmp_path: Path) -> None:
    path = tmp_path / "edge.csv"
    path.write_text(text, encoding="utf-8")
    official = pd.read_csv(path)
    scan = scan_csv(path, ())
    assert scan.header == tuple(official.columns)
    assert scan.dtypes == tuple(_PANDAS_KIND[official[c].dtype.kind] for c in official.columns)
    ours = [row for batch in typed_rows(scan, scan.header, dropna=False) for row in batch]
    theirs = official.astype(object).where(official.notna(), None)
    assert ours == list(theirs.itertuples(name=None))
    kept = [row for batch in typed_rows(scan, scan.header, dropna=True) for row in batch]
    assert kept == list(official.dropna().astype(object).itertuples(name=None))
