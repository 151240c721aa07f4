"""The index in the data home, its metadata, and first-row-wins on the distance table's conflicting duplicates."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from sandbox_index import Sandbox, schema, travelplanner_index_path


def test_the_index_lives_in_the_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "explicit"))
    assert travelplanner_index_path() == tmp_path / "explicit" / "travelplanner.sqlite"
    assert travelplanner_index_path(tmp_path) == tmp_path / "travelplanner.sqlite"


def test_metadata_records_sources_counts_and_versions(sandbox: Sandbox, travelplanner_data: Path) -> None:
    meta = sandbox.metadata()
    assert meta["schema_version"] == str(schema.SCHEMA_VERSION)
    assert meta["tripbench_version"] and meta["built_at"].startswith("20")
    for name in schema.SOURCE_FILES:
        data = (travelplanner_data / "database" / name).read_bytes()
        assert meta[f"source.{name}.bytes"] == str(len(data))
        assert meta[f"source.{name}.sha256"] == hashlib.sha256(data).hexdigest()
    assert meta["rows.flights"] == "4111" and meta["synthetic_flights"] == "0"


def test_distance_takes_the_first_of_conflicting_duplicates(
    sandbox: Sandbox, travelplanner_data: Path
) -> None:
    table = pd.read_csv(travelplanner_data / "database" / schema.DISTANCES.file)
    variants = table.drop_duplicates(["origin", "destination", "duration", "distance"])
    conflicting = variants[variants.duplicated(["origin", "destination"], keep=False)]
    firsts = conflicting.drop_duplicates(["origin", "destination"])  # file order: the first row of each pair
    assert len(firsts) >= 20  # docs/fidelity/travelplanner.md §1.1: 24 pairs with conflicting values
    for row in firsts.itertuples():
        expected = tuple(None if pd.isna(v) else v for v in (row.duration, row.distance))
        assert tuple(sandbox.distance(row.origin, row.destination)) == expected


def test_missing_duration_is_none(sandbox: Sandbox, travelplanner_data: Path) -> None:
    table = pd.read_csv(travelplanner_data / "database" / schema.DISTANCES.file)
    firsts = table.drop_duplicates(["origin", "destination"])
    row = firsts[firsts.duration.isna()].iloc[0]
    assert sandbox.distance(row.origin, row.destination) == (None, None)
