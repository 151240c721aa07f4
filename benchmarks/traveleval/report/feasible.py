"""The queries no truthful plan can satisfy: a preferred hotel feature no hotel of the city has, a preferred cuisine no
restaurant of the city serves, or intercity transport preferred only in kinds no train or flight between the two
cities is (e.g. only flights, between cities without one). A plan meets such a constraint only by inventing a row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.base import Task
from benchmarks.reporting import Column, Kind, RunView, Section, Table
from benchmarks.traveleval import paths
from benchmarks.traveleval.evaluation.city import city_facts
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from errors import UserError

REASONS = ("hotel feature", "cuisine", "transport")


def unsatisfiable(sandbox: Sandbox, query: Mapping[str, Any]) -> list[str]:
    """The reasons (`REASONS`) a query cannot be satisfied from the sandbox; [] when it can."""
    facts = city_facts(sandbox, str(query.get("target_city", "")))
    reasons = []
    wanted = _preferences(query, "accommodations")
    if wanted and not set(wanted) & set(facts.hotel_features.values()):
        reasons.append(REASONS[0])
    if set(_preferences(query, "diet")) - set(facts.cuisines.values()):
        reasons.append(REASONS[1])
    kinds = _preferences(query, "transportation")
    if kinds and not set(kinds) & _offered(sandbox, str(query.get("start_city", "")),
                                           str(query.get("target_city", ""))):
        reasons.append(REASONS[2])
    return reasons


def _preferences(query: Mapping[str, Any], block: str) -> list[str]:
    found = query.get(block)
    items = found.get("preferences") if isinstance(found, Mapping) else None
    return [item for item in items if isinstance(item, str)] if isinstance(items, list) else []


def _offered(sandbox: Sandbox, start: str, target: str) -> set[str]:
    kinds = {train.train_type for train in sandbox.trains(start, target, both_ways=True)} if start != target else set()
    if any(flight.from_airport.startswith(start) and flight.to_airport.startswith(target)
           or flight.to_airport.startswith(start) and flight.from_airport.startswith(target)
           for flight in sandbox.all_flights()):
        kinds.add("飞机")
    return kinds


def data_dir(runs: Sequence[RunView]) -> Path:
    for run in runs:
        if run.options.get("data_dir"):
            return Path(str(run.options["data_dir"]))
    return paths.data_dir()


def unsatisfiable_section(runs: Sequence[RunView]) -> Section | None:
    """The count per split tier and reason, the uids in the note; None when the sandbox cannot be opened."""
    tasks: dict[str, Task] = {task.id: task for run in runs for task in run.tasks}
    try:
        with Sandbox.open(ensure_index(data_dir(runs))) as sandbox:
            found = {uid: reasons for uid, task in tasks.items() if (reasons := unsatisfiable(sandbox, task.input))}
    except (UserError, OSError) as exc:
        return Section("Queries no plan can satisfy", notes=[f"Not checked: the sandbox could not be opened ({exc})."])
    table = Table("te_unsatisfiable", "Queries no truthful plan can satisfy (by query tag)",
                  (Column("tag"), Column("queries", Kind.INT), Column("unsatisfiable", Kind.INT),
                   *(Column(reason, Kind.INT) for reason in REASONS)))
    tags = Counter(_tag(task) for task in tasks.values())
    for tag in tags:
        uids = [uid for uid in found if _tag(tasks[uid]) == tag]
        why = Counter(reason for uid in uids for reason in found[uid])
        table.add(tag, tags[tag], len(uids), *(why[reason] for reason in REASONS))
    table.note = ("A preferred hotel feature or cuisine the city's sandbox rows lack, or preferred transport kinds no "
                  "train or flight between the two cities is; a progressive query counts under its own tag. The "
                  "next table lists them." if found else "Every query of the runs can be satisfied from the sandbox.")
    return Section("Queries no plan can satisfy", [table, _listing(found)] if found else [table])


def _listing(found: Mapping[str, Sequence[str]]) -> Table:
    table = Table("te_unsatisfiable_queries", "The unsatisfiable queries", (Column("uid"), Column("why")))
    for uid, reasons in found.items():
        table.add(uid, "; ".join(reasons))
    return table


def _tag(task: Task) -> str:
    tag = task.input.get("tag")
    group = "progressive " if task.input.get("step") else ""
    return f"{group}{tag}" if isinstance(tag, str) else "untagged"
