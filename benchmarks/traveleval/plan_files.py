"""Plan files made outside a run: read by `tripbench evaluate --benchmark traveleval` and, as the benchmark's
`plan_files` part (`base.PlanFiles`), by `tripbench import-plans`.

Two formats, told apart by the content:
- JSONL: one `FinalTravelPlan` object per line (what a run's submission holds);
- the official generator's files (onlycwy11/TravelEval, `core/utils/output_handler.py`): an indented JSON array of
  `{query_uid, itinerary}`, rewritten whole after each parsed answer, named `plans_<model>_<strategy>.json` (in
  `plans/raw/`; `..._matched.json` once run.py's POI cleaning renamed the places; `added_plans_...` in an earlier
  version). Answers that failed the schema went to `fail_plans_<model>_<strategy>.json` as `{"_raw_response",
  "_error"}`: they are read as failed answers (`parse_failure`), with the uid when the raw answer names one.

`<strategy>` is the official strategy's display name: `Direct Prompting` (our `direct`), `Zero-shot CoT` (`cot`),
`ReAct&Reflexion` (`ReAct&Reflection` before), or, in the files of the paper's runs, `ReAct` (`react`) and
`Reflexion` (`reflexion`), one strategy each. The official loop writes both plans of its ReAct-with-reflexion
method to that one file: the first plan (the `react` answer), then the plan revised after the critique call
(`reflexion`), the second only when the first parsed. So in such a file a uid's answers alternate react,
reflexion (a second pair is the next sample); a failed answer takes the next place of its uid once the plans files
were read. Files named with our own strategy names (`plans_<model>_direct.json`) are read the same way.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks.base import DELIVERED, ImportedPlan, ImportedPlans, RolloutResult
from benchmarks.json_arrays import NotAnArray, array_items
from benchmarks.jsonl import MAX_NESTING, deeper_than, read_jsonl, too_deep
from benchmarks.traveleval.agents.statuses import PARSE_FAILURE
from benchmarks.traveleval.dataset import ALL, PROGRESSIVE, SPLITS, load_tasks
from benchmarks.traveleval.paths import data_dir as default_data_dir
from datahome.input_files import MAX_ENTRY_BYTES, input_chunks
from errors import DataError, UsageError

OFFICIAL_STRATEGIES: Mapping[str, str] = {"Direct Prompting": "direct", "Zero-shot CoT": "cot",
                                          "ReAct&Reflexion": "react", "ReAct&Reflection": "react",
                                          "ReAct": "react", "Reflexion": "reflexion"}
"""The official strategies' display names (in file names) -> ours; the ReAct-with-reflexion file also holds the
`reflexion` answers (module docstring)."""
_REACT_AND_REFLEXION = ("react", "reflexion")
_OURS = ("direct", "cot", "react", "reflexion")
_NAME = re.compile(r"(?P<failed>fail_)?(?:added_)?plans_(?P<model>.+)_(?P<strategy>"
                   + "|".join(re.escape(name) for name in (*OFFICIAL_STRATEGIES, *_OURS))
                   + r")(?:_matched)?\.json")


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One entry of a plan file: a plan, or why there is none."""

    where: str
    """`FILE:LINE` (JSONL) or `FILE[INDEX]` (a JSON array, from 0)."""
    plan: dict[str, Any] | None
    """The `FinalTravelPlan` object, None when there is none."""
    error: str = ""
    """Why there is no plan: unreadable, or the generator's own parse failure (`failed`)."""
    failed: bool = False
    """The generator recorded a failed answer here (a `fail_plans_` entry): a result, not a broken file."""
    uid: str | None = None
    """The query uid the entry names (the plan's, or the failed answer's), None when it names none."""


@dataclass(frozen=True, slots=True)
class Source:
    """What an official file name says."""

    model: str
    strategy: str
    """Our strategy name (`direct`, `cot`, `react`, `reflexion`); `react` also for the ReAct&Reflexion file."""
    paired: bool
    """The official ReAct&Reflexion file: a uid's answers alternate react, reflexion."""
    failed: bool
    """A `fail_plans_` file."""


def official_source(path: Path) -> Source | None:
    """The model and strategy an official file name (`plans_<model>_<strategy>[_matched].json`) says, else None."""
    match = _NAME.fullmatch(path.name)
    if match is None:
        return None
    written = match["strategy"]
    return Source(match["model"], OFFICIAL_STRATEGIES.get(written, written), written in ("ReAct&Reflexion",
                                                                                           "ReAct&Reflection"),
                  match["failed"] is not None)


class PlanFile:
    """A plan file of either format, its format checked when made; its entries read one at a time, each time it is
    iterated, so memory holds one plan, whatever the file's size (`datahome.input_files.MAX_ENTRY_BYTES` each).

    Raises:
        DataError: the file is not UTF-8 text, is empty, is no regular file, or opens an indented array (a first line
            of "[" alone, as the official files) that is not valid JSON, e.g. cut short: one message, not one per
            line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.array = _is_array(path)
        """An official JSON array (else JSONL)."""

    def __iter__(self) -> Iterator[PlanEntry]:
        if self.array:
            for index, item in enumerate(array_items(_text(self.path), MAX_ENTRY_BYTES)):
                yield _array_entry(self.path, index, item)
        else:
            yield from _line_entries(self.path)


def _text(path: Path) -> Iterator[str]:
    """The file's text, a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    read = 0
    try:
        for chunk in input_chunks(path):
            yield decoder.decode(chunk)
            read += len(chunk)
        yield decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text: {exc.reason} at byte {read + exc.start}") from None


def _is_array(path: Path) -> bool:
    """Whether the whole text is one JSON array (read through once, an item at a time), else JSONL (also something
    else, to be reported line by line).

    Raises:
        DataError: as `PlanFile`.
    """
    text = _text(path)
    head = next((chunk for chunk in text if chunk.strip()), None)
    if head is None:
        raise DataError(f"{path}: empty: expected one FinalTravelPlan object per line, or a JSON array of them")
    if not head.lstrip().startswith("["):
        for _ in text:  # every byte checked as UTF-8, as when the file was read whole
            pass
        return False
    try:
        for _ in array_items(itertools.chain([head], text), MAX_ENTRY_BYTES):  # each entry's nesting: `_array_entry`
            pass
    except NotAnArray as exc:
        if head.lstrip().split("\n", 1)[0].strip() == "[":
            raise DataError(f"{path}: not a valid JSON array of plans: {exc}") from None
        for _ in _text(path):
            pass
        return False
    return True


def _array_entry(path: Path, index: int, item: Any) -> PlanEntry:
    """An entry of an official file: a plan object, or in a `fail_plans_` file a failed answer."""
    where = f"{path}[{index}]"
    if not isinstance(item, dict):
        return PlanEntry(where, None, f"expected a FinalTravelPlan object, got {type(item).__name__}")
    if deeper_than(item, MAX_NESTING):
        return PlanEntry(where, None, too_deep(MAX_NESTING))
    if "_error" in item and "itinerary" not in item:
        raw = item.get("_raw_response")
        uid = raw.get("query_uid") if isinstance(raw, dict) else None
        return PlanEntry(where, None, f"the generator could not use this answer: {item['_error']}", failed=True,
                         uid=uid if isinstance(uid, str) else None)
    return PlanEntry(where, item, uid=_uid(item))


def _line_entries(path: Path) -> Iterator[PlanEntry]:
    """The entries of a JSONL file, one per non-empty line (`benchmarks.jsonl`: lines end at "\\n" only)."""
    for line in read_jsonl(path, expected="one FinalTravelPlan object", limit=None):
        where = f"{path}:{line.number}"
        if line.error is not None:
            yield PlanEntry(where, None, line.error)
        elif isinstance(line.value, dict):
            yield PlanEntry(where, line.value, uid=_uid(line.value))
        else:
            yield PlanEntry(where, None, f"expected a FinalTravelPlan object, got {type(line.value).__name__}")


def _uid(plan: Mapping[str, Any]) -> str | None:
    uid = plan.get("query_uid")
    return uid if isinstance(uid, str) else None


def query_of(queries: Mapping[str, Any], uid: Any) -> Any:
    """The query of a plan's uid, looked up as the official batch loop does: the uid, then the uid with every
    "_scheme1", then also every "_scheme2", then every "_scheme3" removed (anywhere in it); None when unknown."""
    if not isinstance(uid, str):
        return None
    query = queries.get(uid)
    for number in (1, 2, 3):
        if query:
            break
        uid = uid.replace(f"_scheme{number}", "")
        query = queries.get(uid)
    return query


def read_plans(paths: Sequence[Path], options: BaseModel, *, model: str | None, strategy: str | None,
               split: str | None) -> ImportedPlans:
    """`base.PlanFiles.read_plans` for TravelEval: plans files first, then `fail_plans_` files (so a failed answer
    takes the place after its uid's plans), each answer's task its query's uid (`query_of`). The files are read
    through once here for the answers' keys; their results are read again, one at a time, when they are stored.

    Raises:
        UsageError: no model or strategy for a file whose name does not say them, an unknown split, or answers to
            queries of both `all` and `progressive` without a split that holds both.
        DataError: a file that cannot be read.
    """
    data_dir = getattr(options, "data_dir", None) or default_data_dir()
    queries = {task.id: task for each in (ALL, PROGRESSIVE) for task in load_tasks(data_dir, each)}
    ordered = sorted(paths, key=lambda path: bool((source := official_source(path)) and source.failed))
    files = [PlanFile(path) for path in ordered]
    skipped: list[str] = []
    found = [plan for plan, _ in _answers(files, queries, model, strategy, skipped)]
    chosen = _split(split, {plan.task for plan in found}, data_dir)
    kept = {task.id for task in load_tasks(data_dir, chosen)}
    skipped += [f"{plan.task} ({plan.model} / {plan.strategy}): not a query of split {chosen}"
                for plan in found if plan.task not in kept]

    def results() -> Iterator[RolloutResult]:
        for plan, entry in _answers(files, queries, model, strategy, []):
            if plan.task in kept:
                yield (RolloutResult(DELIVERED, plan=entry.plan) if entry.plan is not None else
                       RolloutResult(PARSE_FAILURE, error=entry.error))

    return ImportedPlans(chosen, [plan for plan in found if plan.task in kept], results, skipped)


def _answers(files: Sequence[PlanFile], queries: Mapping[str, Any], model: str | None, strategy: str | None,
             skipped: list[str]) -> Iterator[tuple[ImportedPlan, PlanEntry]]:
    """Each answer of `files` (in order) with its key, the entries that are none noted in `skipped`."""
    counts: dict[tuple[str, str, str], int] = {}
    for file in files:
        path = file.path
        source = official_source(path)
        label = model or (source.model if source else None)
        if label is None or (strategy is None and source is None):
            raise UsageError(f"{path.name}: the file name does not say the model and strategy "
                             "(plans_<model>_<strategy>.json): give --model and --strategy")
        for entry in file:
            query = query_of(queries, entry.uid)
            if entry.plan is None and not entry.failed:
                skipped.append(f"{entry.where}: {entry.error}")
                continue
            if query is None:
                unnamed = entry.failed and entry.uid is None
                skipped.append(f"{entry.where}: {entry.error} (it names no query)" if unnamed else
                               f"{entry.where}: no TravelEval query with uid {entry.uid!r}")
                continue
            task = str(query.id)
            paired = strategy is None and source is not None and source.paired
            family = strategy or (source.strategy if source else "")
            place = counts.get((task, label, family), 0)
            counts[task, label, family] = place + 1
            name, sample = ((_REACT_AND_REFLEXION[place % 2], place // 2) if paired else (family, place))
            yield ImportedPlan(task, label, name, sample), entry


def _split(split: str | None, tasks: set[str], data_dir: Path) -> str:
    """`split` when given, else the first of `SPLITS` (smallest first) holding every task."""
    if split is not None:
        if split not in SPLITS:
            raise UsageError(f"unknown TravelEval split {split!r} (one of {', '.join(SPLITS)})")
        return split
    for candidate in SPLITS:
        if tasks <= {task.id for task in load_tasks(data_dir, candidate)}:
            return candidate
    raise UsageError(f"no split holds every query the plans answer (splits: {', '.join(SPLITS)})")
