"""Fidelity: rebuild the reference information of all 45 train queries and compare with the official one.

The dataset's `reference_information` holds the official tools' outputs for every city and leg of a query
(docs/fidelity/travelplanner.md §1.2); `database/train_ref_info.jsonl` holds the same as row values. Every entry is
rebuilt from the sandbox and compared byte for byte (text) and value for value (rows, types included).

The staged partial flights file (SOURCES.md §1) is in the official file's row order, ascending flight number, and
tools keep file order: every entry, flight tables included, is rebuilt exactly; no residue is allowed.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import pytest

from benchmarks.travelplanner.reference import compare_reference, route_of


@pytest.fixture(scope="module")
def train(travelplanner_data: Path) -> list[tuple[dict, list[dict[str, str]], dict]]:
    """(query, its reference_information list, its train_ref_info.jsonl object) for the 45 train queries."""
    def lines(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    queries = lines(travelplanner_data / "queries/train.jsonl")
    rows = lines(travelplanner_data / "database/train_ref_info.jsonl")
    assert len(queries) == len(rows) == 45
    return [(q, ast.literal_eval(q["reference_information"]), r) for q, r in zip(queries, rows, strict=True)]


def test_reference_information_of_every_train_query(sandbox, train) -> None:
    compared, mismatches = 0, {}
    for number, (query, given, given_rows) in enumerate(train, start=1):
        count, found = compare_reference(sandbox, query["org"], given, given_rows)
        compared += count
        for mismatch in found:
            mismatches.setdefault((number, mismatch.description), set()).add(mismatch.form)
    matched = compared - len(mismatches)
    print(f"\nreference fidelity: {matched}/{compared} entries = {matched / compared:.1%} byte for byte and value "
          f"for value; residue {len(mismatches)}: {sorted(mismatches)}")
    assert compared == 675
    assert mismatches == {}


def test_repr_of_the_rebuilt_list_is_the_dataset_string(sandbox, train) -> None:
    from benchmarks.travelplanner.reference import reference_information

    query, given, _ = train[0]
    rebuilt = reference_information(sandbox, route_of(query["org"], [item["Description"] for item in given]))
    assert repr(rebuilt) == query["reference_information"]


def test_every_other_day_schedule_matches_44_train_routes(train) -> None:
    from benchmarks.travelplanner.reference import Route

    same = 0
    for query, given, _ in train:
        route = route_of(query["org"], [item["Description"] for item in given])
        same += Route.every_other_day(query["org"], route.cities, tuple(ast.literal_eval(query["date"]))) == route
    assert same == 44


def test_staged_flights_are_in_the_official_order(travelplanner_data: Path, train) -> None:
    """Official tables list flights by ascending number, as the official file does; so does the staged file."""
    official = [[int(row["Flight Number"][1:]) for row in value]
                for _, _, given_rows in train for key, value in given_rows.items()
                if key.startswith("Flight from ") and isinstance(value, list)]
    assert len(official) == 61 and all(numbers == sorted(numbers) for numbers in official)
    with open(travelplanner_data / "database/flights/clean_Flights_2022.csv", encoding="utf-8", newline="") as handle:
        staged = [int(row["Flight Number"][1:]) for row in csv.DictReader(handle)]
    assert len(staged) == 4111 and staged == sorted(staged)
