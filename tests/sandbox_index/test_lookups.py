"""Sandbox lookups on the real staged database, checked against rows read from the CSVs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sandbox_index import DistanceRow, Frame, Sandbox
from sandbox_index import sandbox as sandbox_module


def test_flight_search_returns_the_train_reference_flight(sandbox: Sandbox) -> None:
    frame = sandbox.flights("St. Petersburg", "Rockford", "2022-03-16")
    assert isinstance(frame, Frame)
    assert frame.columns[:2] == ("Flight Number", "Price")
    assert [row[0] for row in frame.rows] == ["F3573659"]
    assert frame.rows[0][1] == 474 and frame.dtypes[1] == "int" and frame.dtypes[-1] == "float"


def test_first_duplicate_restaurant_row_comes_first(sandbox: Sandbox) -> None:
    # docs/fidelity/travelplanner.md §11: the first "Subway" row in Rockford costs 42 (two rows, file order).
    frame = sandbox.match_restaurants("Subway", "Rockford", exact=True)
    assert [row[1] for row in frame.rows] == [42, 26]
    assert frame.index == tuple(sorted(frame.index))


def test_distance_and_background(sandbox: Sandbox) -> None:
    assert sandbox.distance("Detroit", "Norfolk") == DistanceRow("10 hours 55 mins", "1,144 km")
    assert sandbox.distance("Norfolk", "Nowhere") is None
    assert len(sandbox.cities()) == 311
    assert len(sandbox.city_states()) == 312 and sandbox.city_states()["Jackson"] == "Mississippi"


def test_a_fresh_process_queries_without_importing_the_build_only_modules(travelplanner_index: Path) -> None:
    """Cold open + first query (issue 2: <= 50 ms): numpy (synthetic rows) and importlib.metadata (the build's
    version stamp) cost more to import than the open and the query together, so only builds import them."""
    code = ("import sys; from pathlib import Path; from sandbox_index import open_sandbox; "
            "sandbox = open_sandbox(Path(sys.argv[1])); sandbox.flights('St. Petersburg', 'Rockford', '2022-03-16'); "
            "print(sorted({'numpy', 'importlib.metadata', 'pandas'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, str(travelplanner_index)], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_a_lookup_is_kept_and_the_oldest_go_first(sandbox: Sandbox, monkeypatch) -> None:
    """A sandbox answers a lookup it made before from what it kept, never mixing up lookups that share arguments."""
    monkeypatch.setattr(sandbox_module, "FRAMES_KEPT", 3)
    with Sandbox(sandbox.path) as fresh:
        first = fresh.restaurants("Rockford")
        assert fresh.restaurants("Rockford") is first
        assert fresh.attractions("Rockford") != first  # same city, another table
        exact = fresh.match_restaurants("Subway", "Rockford", exact=True)
        assert [row[1] for row in exact.rows] == [42, 26]
        assert len(fresh.match_restaurants("Sub", "Rockford")) >= 2  # same table and city, another lookup
        assert fresh.restaurants("Rockford") is not first  # pushed out by the three lookups since
        again = fresh.restaurants("Rockford")
        assert again == first and hash(again) == hash(first)  # equal Frames hash alike, their hash kept or not
        assert hash(Frame(first.columns, first.dtypes, first.index, first.rows)) == hash(first)
        assert fresh.distance("Detroit", "Norfolk") is fresh.distance("Detroit", "Norfolk") is not None
        assert fresh.distance("Norfolk", "Nowhere") is None and fresh.distance("Norfolk", "Nowhere") is None
        assert fresh.restaurants(["not", "text"]) == Frame(first.columns, first.dtypes, (), ())  # type: ignore[arg-type]
