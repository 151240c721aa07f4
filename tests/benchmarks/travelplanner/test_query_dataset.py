"""Loading query splits in the Hugging Face layout: JSONL and CSV agree; bad rows name file, line and field."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from benchmarks.travelplanner.dataset import LocalConstraint, Query, find_split_file, load_queries, query_from_record
from errors import DataError

FIELDS = ("org", "dest", "days", "visiting_city_number", "date", "people_number", "local_constraint", "budget",
          "query", "level", "annotated_plan", "reference_information")


def test_train_split_types(train_queries: list[Query]) -> None:
    assert len(train_queries) == 45
    first = train_queries[0]
    assert first.date == ("2022-03-16", "2022-03-17", "2022-03-18")
    assert first.local_constraint == LocalConstraint()
    assert first.has_labels
    assert first.reference_information is not None
    assert first.reference_information[0]["Description"] == "Attractions in Rockford"
    levels = [q.level for q in train_queries]
    assert (levels.count("easy"), levels.count("medium"), levels.count("hard")) == (15, 15, 15)
    hard = [q for q in train_queries if q.level == "hard"]
    assert all(q.local_constraint is not None and q.local_constraint.requested() == 3 for q in hard)


def test_annotated_plan_is_the_day_list(train_queries: list[Query]) -> None:
    """The Hub field is [query header, [day, ...]]; the record keeps the day list (module docstring)."""
    for query in train_queries:
        plan = query.annotated_plan
        assert plan is not None
        days = [day for day in plan if day]
        assert len(days) == query.days
        assert all("current_city" in day for day in days)


def test_validation_split_has_no_plans(travelplanner_data: Path) -> None:
    queries = load_queries(find_split_file(travelplanner_data, "validation"))
    assert len(queries) == 180
    assert all(q.annotated_plan is None and q.reference_information is None and q.has_labels for q in queries)


def test_csv_and_jsonl_give_the_same_queries(travelplanner_data: Path, train_queries: list[Query],
                                             tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (travelplanner_data / "queries" / "train.jsonl").read_text().splitlines()]
    path = tmp_path / "train.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    assert load_queries(path) == train_queries



def test_a_str_path_reads_like_a_path(travelplanner_data: Path, train_queries: list[Query], tmp_path: Path) -> None:
    """Notebook users pass plain strings; a bad one still gets the one-line DataError, not a TypeError."""
    assert load_queries(str(travelplanner_data / "queries" / "train.jsonl")) == train_queries
    with pytest.raises(DataError, match="query file not found"):
        load_queries(str(tmp_path / "missing.jsonl"))

def test_test_split_hides_labels(tmp_path: Path) -> None:
    path = tmp_path / "test.csv"
    path.write_text("org,dest,days,date,query,level,reference_information\n"
                    "Sarasota,Chicago,3,\"['2022-03-22', '2022-03-23', '2022-03-24']\",Plan it,easy,\n")
    (query,) = load_queries(path)
    assert query.people_number is None and query.local_constraint is None and not query.has_labels


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


GOOD = {"org": "A", "dest": "B", "days": 3, "visiting_city_number": 1, "date": "['2022-03-01']", "people_number": 1,
        "local_constraint": "{'house rule': None, 'cuisine': None, 'room type': None, 'transportation': None}",
        "budget": 900, "query": "q", "level": "easy"}


@pytest.mark.parametrize(("change", "field"), [
    ({"days": "three"}, "days"),
    ({"days": 0}, "days"),
    ({"org": None}, "org"),
    ({"date": "['2022-03-01'"}, "date"),
    ({"date": "__import__('os').system('true')"}, "date"),  # literal_eval, never eval
    ({"local_constraint": "{'house rule': 'loud music'}"}, "local_constraint"),
    ({"local_constraint": "{'cuisine': 'Chinese'}"}, "local_constraint"),
    ({"local_constraint": "{'budget': 3}"}, "local_constraint"),
    ({"budget": 12.5}, "budget"),
])
def test_bad_rows_name_file_line_and_field(tmp_path: Path, change: dict[str, object], field: str) -> None:
    path = _write_jsonl(tmp_path / "q.jsonl", [GOOD, {**GOOD, **change}])
    with pytest.raises(DataError) as caught:
        load_queries(path)
    assert f"{path}:2: field {field!r}" in str(caught.value)


def test_bad_json_line_and_unknown_suffix(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{oops\n")
    with pytest.raises(DataError, match=r"q\.jsonl:2: not valid JSON"):
        load_queries(path)
    with pytest.raises(DataError, match="unsupported query file type"):
        load_queries(tmp_path / "q.txt")


def test_missing_split_lists_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no query file for split 'test'.*queries/test.jsonl"):
        find_split_file(tmp_path, "test")


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "train.parquet"
    path.write_bytes(b"PAR1")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(DataError, match="pyarrow"):
            load_queries(path)
    else:
        with pytest.raises(DataError, match="cannot read parquet"):
            load_queries(path)


def test_record_with_native_values() -> None:
    record = {**GOOD, "date": ["2022-03-01"], "local_constraint": {"house rule": "pets", "cuisine": ["Chinese"],
                                                                  "room type": None, "transportation": None}}
    query = query_from_record(record, "inline")
    assert query.local_constraint == LocalConstraint(house_rule="pets", cuisine=("Chinese",))
    assert query.local_constraint.as_dict()["cuisine"] == ["Chinese"]
