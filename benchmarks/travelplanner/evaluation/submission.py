"""Submission files (docs/fidelity/travelplanner.md §6.3-§6.4): reading, the leaderboard format check, and scoring a
whole file.

A submission is JSONL, one `{"idx", "query", "plan"}` object per line. As in the official driver, line i is
paired with query i of the split (`idx` and the query text are not used for pairing). A line whose `query`
is an object — a full query record in the Hugging Face field layout — is evaluated against that record
instead, which is how custom query sets (and mixed files) are scored.

Departures from the official driver, which has no error handling: a line that is not a JSON object is an
undelivered plan with an `error`; a split query with no line is an undelivered plan with an `error` (the
official driver raises IndexError); every plan is scored even when it would crash the official evaluator
(see `evaluation.plan_days`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.jsonl import Line, read_jsonl
from benchmarks.travelplanner.dataset import SPLIT_SIZES, Query, query_from_record
from benchmarks.travelplanner.evaluation import EvaluationSandbox, PlanVerdict, make_evaluator
from benchmarks.travelplanner.evaluation.metrics import Scores, compute_scores
from benchmarks.travelplanner.evaluation.official import NOT_FILLED
from benchmarks.travelplanner.evaluation.plan_days import MAX_FIELD_CHARS
from benchmarks.travelplanner.plan_fields import FLIGHT_NUMBER_MARKER, extract_from_to, flight_number
from errors import DataError, UsageError, UserError

TEST_LABELS_HIDDEN = (
    "the public test split hides each query's constraints (people_number, local_constraint, budget, "
    "visiting_city_number): only the leaderboard can score it. Check the file's format with `tripbench "
    "check-submission FILE --split test`, or give every line its full query record to score it locally.")

NO_LINE = "no submission line for this query"
"""The `error` of a split query the file has no line for (the official driver raises IndexError)."""
LABEL_FIELDS = ("visiting_city_number", "people_number", "local_constraint", "budget")
"""The query fields the evaluator needs; the public test split hides all four."""

DAY_KEYS = ("current_city", "transportation", "breakfast", "attraction", "lunch", "dinner", "accommodation")
"""The keys every day of a plan must carry (docs/fidelity/travelplanner.md §6.4; the day number key `day`/`days` is
optional)."""


@dataclass(frozen=True, slots=True)
class SubmissionLine:
    """One line of a submission file."""

    number: int
    """1-based line number."""
    record: dict[str, Any] | None = None
    """The parsed JSON object, None when the line is not one."""
    plan: Any = None
    query_text: str | None = None
    query: Query | None = None
    """The embedded query record, when `"query"` is an object."""
    error: str | None = None
    """Why the line is unusable (not JSON, not an object); its plan counts as not delivered."""
    query_error: str | None = None
    """Why an embedded query record is invalid."""


@dataclass(frozen=True, slots=True)
class SubmissionResult:
    """A scored submission: the queries it was paired with, one verdict each, and the metrics."""

    queries: list[Query]
    verdicts: list[PlanVerdict]
    scores: Scores
    misaligned: list[int]
    """Numbers of lines whose query text differs from the split query they were paired with."""


def read_submission(path: Path) -> list[SubmissionLine]:
    """Read every line of a submission file; bad lines are recorded, not raised.

    Raises:
        DataError: when the file cannot be read at all.
    """
    # an empty file: the official evaluator fails on it (IndexError); a table of zeros would hide the mistake
    return [_parse_line(path, line) for line in read_jsonl(path, expected='one {"idx", "query", "plan"} object',
                                                            positional=True)]


def _parse_line(path: Path, line: Line) -> SubmissionLine:
    number, record = line.number, line.value
    if line.error is not None:
        return SubmissionLine(number, error=f"line {number}: {line.error}")
    if not isinstance(record, dict):
        return SubmissionLine(number, error=f"line {number}: expected a JSON object, got {type(record).__name__}")
    query, plan = record.get("query"), record.get("plan")
    if isinstance(query, dict):
        try:
            parsed = query_from_record(query, "query record")
        except DataError as exc:
            return SubmissionLine(number, record, plan, query_error=f"{path}:{number}: {exc}")
        return SubmissionLine(number, record, plan, query_text=parsed.query, query=parsed)
    return SubmissionLine(number, record, plan, query_text=query if isinstance(query, str) else None)


def pair_queries(lines: Sequence[SubmissionLine], split_queries: Sequence[Query] | None,
                 split: str | None = None) -> list[tuple[Query, Any, str | None]]:
    """`(query, plan, error)` per query: line i with split query i, or with the line's own record.

    Raises:
        DataError: an embedded query record is invalid, or a line has neither a record nor a split query.
        UserError: no query set was given (or it is the public test split) and a line carries only the text.
    """
    pairs: list[tuple[Query, Any, str | None]] = []
    for i, line in enumerate(lines):
        if line.query_error:
            raise DataError(line.query_error)
        query = line.query
        if query is None:
            if split_queries is None and split == "test":
                raise UserError(f"line {line.number} has no query record, and {TEST_LABELS_HIDDEN}")
            if split_queries is None:
                raise UsageError(f"line {line.number} has no query record: pass --split or --queries to pair "
                                "lines with queries")
            if i >= len(split_queries):
                raise DataError(f"line {line.number}: the query set has only {len(split_queries)} queries")
            query = split_queries[i]
        pairs.append((query, line.plan, line.error))
    for query in (split_queries or [])[len(lines):]:
        pairs.append((query, None, NO_LINE))
    return pairs


def evaluate_submission(path: Path, sandbox: EvaluationSandbox, *, split_queries: Sequence[Query] | None = None,
                        split: str | None = None, mode: str = "official") -> SubmissionResult:
    """Score every plan of a submission file and compute the official metrics.

    Args:
        path: the JSONL submission.
        sandbox: an open sandbox.
        split_queries: the split's queries, paired by position with lines lacking a query record.
        split: the official split name, when `split_queries` is a whole official split (fixed denominators).
        mode: `official` or `strict`.

    Raises:
        UserError: a query hides its constraints (public test split), or lines cannot be paired.
    """
    lines = read_submission(path)
    pairs = pair_queries(lines, split_queries, split)
    hidden = next((i for i, (query, _, _) in enumerate(pairs) if not query.has_labels), None)
    if hidden is not None:
        own = lines[hidden] if hidden < len(lines) and lines[hidden].query is not None else None
        raise UserError(_unlabelled(pairs[hidden][0], hidden, None if own is None else own.number))
    evaluator = make_evaluator(sandbox, mode)
    verdicts = [PlanVerdict(None, None, None, error) if error else evaluator.evaluate(query, plan)
                for query, plan, error in pairs]
    queries = [query for query, _, _ in pairs]
    whole_split = split if split_queries is not None and all(line.query is None for line in lines) else None
    misaligned = [line.number for line, (query, _, _) in zip(lines, pairs)
                  if line.query is None and line.query_text and line.query_text != query.query]
    return SubmissionResult(queries, verdicts, compute_scores(queries, verdicts, split=whole_split), misaligned)


def _unlabelled(query: Query, position: int, line_number: int | None) -> str:
    """Why a query cannot be scored: a public test-split query, or a query missing some labels.

    Args:
        query: the query without labels.
        position: its 0-based position among the scored queries.
        line_number: the line whose own query record it is, None when it came from the split.
    """
    missing = [name for name in LABEL_FIELDS if getattr(query, name) is None]
    if len(missing) == len(LABEL_FIELDS):
        return f"query {position + 1} has no labels: {TEST_LABELS_HIDDEN}"
    where = f"query {position + 1}" if line_number is None else f"line {line_number}: its query record"
    return f"{where} lacks {', '.join(missing)}: the evaluator needs every one of {', '.join(LABEL_FIELDS)}"


def check_submission(path: Path, *, split: str | None = None,
                     split_queries: Sequence[Query] | None = None) -> list[str]:
    """The leaderboard format check (docs/fidelity/travelplanner.md §6.4): one message per problem, empty when the file
    is fine.

    Checks the line count against the split, that each line is a `{"idx", "query", "plan"}` object, that the
    query text matches the split's query at that position (when the split's queries are known), and that
    each plan is a list of day objects the official evaluator can read without crashing (§7.6).
    """
    lines = read_submission(path)
    expected = len(split_queries) if split_queries is not None else SPLIT_SIZES.get(split or "")
    problems = []
    if expected is not None and len(lines) != expected:
        problems.append(f"{path}: {len(lines)} lines, but the {split or 'query'} set has {expected} queries "
                        "(lines are paired with queries by position; the file must cover every query)")
    for i, line in enumerate(lines):
        known = split_queries[i] if split_queries is not None and i < len(split_queries) else None
        problems += [f"line {line.number}: {problem}" for problem in _line_problems(path, line, known)]
    return problems


def _line_problems(path: Path, line: SubmissionLine, known: Query | None) -> list[str]:
    query = line.query or known
    if line.error or line.record is None:
        return [str(line.error).split(": ", 1)[1]]
    if line.query_error:
        return [line.query_error.removeprefix(f"{path}:{line.number}: ")]
    record = line.record
    problems = [f"missing key {key!r}" for key in ("idx", "query", "plan") if key not in record]
    if record.get("idx") != line.number and "idx" in record:
        problems.append(f"idx is {record['idx']!r}, expected {line.number} (lines are paired by position)")
    if "query" in record and line.query_text is None:
        problems.append("query must be the query text or a query record")
    elif known is not None and line.query is None and line.query_text != known.query:
        problems.append(f"query text differs from query {line.number} of the split")
    days = query.days if query is not None else None
    return problems + plan_problems(line.plan, days)


def plan_problems(plan: Any, days: int | None) -> list[str]:
    """Format problems of one plan, including every input that crashes the official evaluator (§7.6).

    Args:
        plan: the `plan` value; null or `[]` (not delivered) is fine.
        days: the query's days; unknown (public test split) means "the leading filled day objects".
    """
    if not plan:
        return []
    if not isinstance(plan, list):
        return [f"plan must be a list of day objects, got {type(plan).__name__}"]
    problems = []
    if days is None:
        days = next((i for i, day in enumerate(plan)
                     if not isinstance(day, dict) or not day or day.get("current_city") == NOT_FILLED), len(plan))
    elif len(plan) < days:
        problems.append(f"the plan has {len(plan)} day(s), the query asks for {days}")
    for i, day in enumerate(plan[:days], start=1):
        if not isinstance(day, dict):
            problems.append(f"day {i}: expected an object, got {type(day).__name__}")
            continue
        problems += [f"day {i}: {problem}" for problem in _day_problems(day)]
    return problems


def _day_problems(day: dict[str, Any]) -> list[str]:
    problems = [f"missing key {key!r}" for key in DAY_KEYS if key not in day]
    for key in DAY_KEYS:
        value = day.get(key)
        if key in day and value is not None and not isinstance(value, str):
            problems.append(f"{key} must be text, got {type(value).__name__}")
        elif isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            problems.append(f"{key} is longer than {MAX_FIELD_CHARS} characters")
    if day.get("accommodation", "") is None:
        problems.append("accommodation is null (the official minimum-nights check crashes on it)")
    city, transportation = day.get("current_city"), day.get("transportation")
    if not isinstance(city, str) or not isinstance(transportation, str):
        return problems + (["current_city must not be null"] if "current_city" in day and city is None else [])
    if "from" in city and extract_from_to(city)[0] is None:
        problems.append(f"current_city {city!r} contains 'from' but not 'from A to B'")
    if "flight number" in transportation.lower():
        if flight_number(transportation) is None:
            problems.append(f"transportation {transportation!r} must spell the flight as {FLIGHT_NUMBER_MARKER!r}")
        if extract_from_to(transportation)[0] is None and extract_from_to(city)[0] is None:
            problems.append("the flight's cities cannot be read ('from A to B' in transportation or current_city)")
    return problems
