"""TravelPlanner query sets in the Hugging Face layout (`osunlp/TravelPlanner`, docs/fidelity/travelplanner.md §1.2).

A split file is CSV, JSONL or parquet (parquet needs pyarrow, which is not a dependency). Its fields are
`org, dest, days, visiting_city_number, date, people_number, local_constraint, budget, query, level`, plus
`annotated_plan` (train only) and `reference_information`. `date`, `local_constraint`, `annotated_plan` and
`reference_information` are Python-literal strings on the Hub; they are read with `ast.literal_eval`, never
`eval`. The public test split hides `visiting_city_number, people_number, local_constraint, budget`: those
fields are None and `Query.has_labels` is False.

`annotated_plan` on the Hub is `[query header dict, [day dict, ...]]` (checked on all 45 train rows: the
header repeats the query fields, the day list is the plan in the submission format of docs/fidelity/travelplanner.md
§6.4, the same plans as the official fine-tuning file). `Query.annotated_plan` keeps the day list.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from errors import DataError, MissingInput

SPLIT_SIZES = {"train": 45, "validation": 180, "test": 1000}
"""Queries per official split (docs/fidelity/travelplanner.md §1.2)."""

HOUSE_RULES = ("parties", "smoking", "children under 10", "visitors", "pets")
ROOM_TYPES = ("shared room", "not shared room", "private room", "entire room")
TRANSPORTATION_RULES = ("no flight", "no self-driving")
SUFFIXES = (".jsonl", ".csv", ".parquet")


@dataclass(frozen=True, slots=True)
class LocalConstraint:
    """The query's `local_constraint`; None means "not requested" (docs/fidelity/travelplanner.md §1.2)."""

    house_rule: str | None = None
    cuisine: tuple[str, ...] | None = None
    room_type: str | None = None
    transportation: str | None = None

    def requested(self) -> int:
        """How many constraints are set (`!= None`, as the official totals count them, docs/fidelity/travelplanner.md
        §7.5)."""
        return sum(v is not None for v in (self.house_rule, self.cuisine, self.room_type, self.transportation))

    def as_dict(self) -> dict[str, Any]:
        """The official dict with its original keys (`'house rule'`, `'cuisine'`, ...)."""
        cuisine = list(self.cuisine) if self.cuisine is not None else None
        return {"house rule": self.house_rule, "cuisine": cuisine, "room type": self.room_type,
                "transportation": self.transportation}


@dataclass(frozen=True, slots=True)
class Query:
    """One TravelPlanner query. Hidden test-split fields are None."""

    org: str
    dest: str
    days: int
    date: tuple[str, ...]
    query: str
    level: str
    visiting_city_number: int | None = None
    people_number: int | None = None
    local_constraint: LocalConstraint | None = None
    budget: int | None = None
    annotated_plan: list[Any] | None = None
    """The human reference plan: the list of day dicts (train only)."""
    reference_information: list[dict[str, Any]] | None = None
    """`[{'Description': ..., 'Content': ...}, ...]`, the sole-planning input (docs/fidelity/travelplanner.md §1.2)."""

    @property
    def has_labels(self) -> bool:
        """True when every field the evaluator needs is known (False on the public test split)."""
        return None not in (self.visiting_city_number, self.people_number, self.local_constraint, self.budget)


def find_split_file(data_dir: str | os.PathLike[str], split: str) -> Path:
    """The file of `split` under `data_dir`: `queries/<split>.<ext>`, then `<split>.<ext>`.

    Args:
        data_dir: The data folder (a `str` from a notebook works as well as a `Path`).
        split: The split's name (`train`, `validation`, `test`).

    Raises:
        DataError: when none of the candidates exists (the message lists them).
    """
    data_dir = Path(data_dir)
    candidates = [base / f"{split}{suffix}" for base in (data_dir / "queries", data_dir) for suffix in SUFFIXES]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise MissingInput(f"no query file for split {split!r} under {data_dir} (looked for {tried}); run `tripbench data "
                    "fetch` (the public splits and database), or `tripbench data import DIR` for a folder holding "
                    "the official database/ and queries/")


def load_queries(path: str | os.PathLike[str]) -> list[Query]:
    """Read every query of a CSV / JSONL / parquet split file, in file order.

    Args:
        path: The split file (a `str` from a notebook works as well as a `Path`).

    Raises:
        DataError: unreadable file, unknown extension, or a bad row (naming file, line and field).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise DataError(f"{path}: unsupported query file type {suffix!r} (expected one of {', '.join(SUFFIXES)})")
    if not path.is_file():
        raise MissingInput(f"{path}: query file not found")
    reader = {".jsonl": _jsonl_records, ".csv": _csv_records, ".parquet": _parquet_records}[suffix]
    try:
        return [query_from_record(record, f"{path}:{where}") for where, record in reader(path)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot read query file: {exc}") from exc


def query_from_record(record: Mapping[str, Any], where: str) -> Query:
    """Build a Query from one record in the Hugging Face field layout (native values or literal strings).

    Args:
        record: the row; `local_constraint` etc. may be dicts/lists or their Python-literal strings.
        where: prefix of error messages, e.g. `train.jsonl:12`.

    Raises:
        DataError: naming `where` and the field.
    """
    if not isinstance(record, Mapping):
        raise DataError(f"{where}: expected an object with the query fields, got {type(record).__name__}")
    fields = _Fields(record, where)
    days = fields.integer("days", required=True)
    if days is None or days < 1:
        raise DataError(f"{where}: field 'days': expected a positive integer, got {record.get('days')!r}")
    return Query(
        org=fields.text("org"),
        dest=fields.text("dest"),
        days=days,
        date=fields.dates(),
        query=fields.text("query"),
        level=fields.text("level"),
        visiting_city_number=fields.integer("visiting_city_number"),
        people_number=fields.integer("people_number"),
        local_constraint=fields.local_constraint(),
        budget=fields.integer("budget"),
        annotated_plan=fields.annotated_plan(),
        reference_information=fields.reference_information(),
    )


class _Fields:
    """Typed access to one record's fields; every failure names the record and the field."""

    def __init__(self, record: Mapping[str, Any], where: str) -> None:
        self.record, self.where = record, where

    def fail(self, field: str, expected: str) -> DataError:
        got = repr(self.record.get(field))
        if len(got) > 80:
            got = got[:77] + "..."
        return DataError(f"{self.where}: field {field!r}: expected {expected}, got {got}")

    def raw(self, field: str) -> Any:
        """The value, None when absent or empty (a CSV cell of a hidden test field is empty)."""
        value = self.record.get(field)
        return None if value == "" else value

    def literal(self, field: str) -> Any:
        value = self.raw(field)
        if not isinstance(value, str):
            return value
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise self.fail(field, "a Python literal") from exc

    def text(self, field: str) -> str:
        value = self.raw(field)
        if not isinstance(value, str):
            raise self.fail(field, "a non-empty string")
        return value

    def integer(self, field: str, *, required: bool = False) -> int | None:
        value = self.raw(field)
        if value is None and not required:
            return None
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if isinstance(value, float) and value.is_integer():  # parquet/pandas turn int columns with gaps into floats
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise self.fail(field, "an integer")

    def dates(self) -> tuple[str, ...]:
        value = self.literal("date")
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) for d in value):
            raise self.fail("date", "a list of 'YYYY-MM-DD' strings")
        return tuple(value)

    def local_constraint(self) -> LocalConstraint | None:
        value = self.literal("local_constraint")
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail("local_constraint", "a dict with 'house rule', 'cuisine', 'room type', 'transportation'")
        unknown = set(value) - {"house rule", "cuisine", "room type", "transportation"}
        if unknown:
            raise self.fail("local_constraint", f"only the official keys, not {sorted(unknown)}")
        cuisine = value.get("cuisine")
        if cuisine is not None:
            if not isinstance(cuisine, (list, tuple)) or not all(isinstance(c, str) for c in cuisine):
                raise self.fail("local_constraint", "'cuisine' to be None or a list of cuisine names")
            cuisine = tuple(cuisine)
        return LocalConstraint(
            house_rule=self._choice(value, "house rule", HOUSE_RULES),
            cuisine=cuisine,
            room_type=self._choice(value, "room type", ROOM_TYPES),
            transportation=self._choice(value, "transportation", TRANSPORTATION_RULES),
        )

    def _choice(self, constraint: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
        value = constraint.get(key)
        if value is not None and value not in allowed:
            raise self.fail("local_constraint", f"{key!r} to be None or one of {list(allowed)}")
        return value

    def annotated_plan(self) -> list[Any] | None:
        value = self.literal("annotated_plan")
        if value is None:
            return None
        # [query header, [day, ...]] on the Hub; a bare day list is accepted too.
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], dict) and isinstance(value[1], list):
            value = value[1]
        if not isinstance(value, list):
            raise self.fail("annotated_plan", "[query header, [day, ...]] or a list of day dicts")
        return value

    def reference_information(self) -> list[dict[str, Any]] | None:
        value = self.literal("reference_information")
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise self.fail("reference_information", "a list of {'Description', 'Content'} dicts")
        return value


def _jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: not valid JSON: {exc.msg}") from exc
            except RecursionError as exc:
                raise DataError(f"{path}:{number}: JSON nested too deeply") from exc
            yield number, record


def _csv_records(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    csv.field_size_limit(sys.maxsize)  # reference_information cells run to hundreds of kB
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        start = reader.line_num + 1
        for row in reader:
            if None in row:
                raise DataError(f"{path}:{start}: more cells than the header has columns")
            yield start, row
            start = reader.line_num + 1


def _parquet_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        import pyarrow.parquet as parquet
    except ImportError as exc:
        raise DataError(f"{path}: reading parquet needs pyarrow (pip install pyarrow); "
                        "or use the CSV / JSONL file") from exc
    try:
        rows = parquet.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family for corrupt files
        raise DataError(f"{path}: cannot read parquet file: {exc}") from exc
    for number, row in enumerate(rows):
        yield f"row {number}", row
