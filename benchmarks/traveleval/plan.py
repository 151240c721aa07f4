"""The plan an agent must deliver (`FinalTravelPlan`), and `parse_plan` to read one out of model text.

The schema has the official field names, types, enums and time/date patterns (the repository's
`agent/schemas/travel_plan.py`, which the official agents fill through `instructor`); the models here are written
for tripbench from that description. As there, validation is pydantic's default (lax) mode, so `"2"` is read as
2 for an integer field, and keys the schema does not name are dropped. An activity's `details` stays a free
object, as in the official schema (`ActivityDetails` lists the keys the evaluator reads from it).

The evaluator reads plans as raw JSON objects, not through this schema: a plan that fails here may still be scored.

Two ways of reading a plan out of an answer (`read_plan`): `official` (the default), as the official pipeline does,
and `lenient`, which finds a plan in more answers (any fenced block, else the largest JSON object in the text), so
its parse-failure rates are lower than the paper's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field, ValidationError

_HH_MM = r"^([01]\d|2[0-3]):([0-5]\d)$"
_DATE = r"^\d{4}-\d{2}-\d{2}$"

RoomType = Literal["单人房", "大床房", "双人房", "家庭房"]
IntercityMode = Literal["高铁", "飞机", "动车", "快速", "特快", "直达特快"]
LocalMode = Literal["走路", "步行", "骑行", "驾车", "公交", "地铁", "打车", "包车", "高铁", "飞机"]
ActivityType = Literal["intercity_transport", "attraction", "meal", "accommodation", "accommodation_check_in",
                       "accommodation_check_out"]
EndingType = Literal["intercity_transport", "accommodation_check_in", "accommodation"]


class RoomBooking(BaseModel):
    type: RoomType
    quantity: int
    price_per_night: float
    nights: int


class Accommodation(BaseModel):
    hotel_name: str
    room_type: list[RoomBooking]
    total_cost: float


class TicketDetails(BaseModel):
    transport_number: str
    """Train or flight number."""
    price: float
    """Price of one ticket."""
    number: int
    """Tickets bought."""


class IntercityLeg(BaseModel):
    description: str
    start_time: str = Field(pattern=_HH_MM)
    end_time: str = Field(pattern=_HH_MM)
    location_name: str
    """The station or airport arrived at."""
    cost: float
    transportation_to: IntercityMode
    transportation_cost: float
    details: TicketDetails


class IntercityTransport(BaseModel):
    transport_type: list[IntercityLeg]
    total_cost: float


class ActivityDetails(BaseModel):
    """The keys an activity's `details` may hold (the official schema defines them but types `details` as a free
    object; so does `Activity`)."""

    transport_time: str
    """Minutes of travel to the activity, as text ("30")."""
    ticket_type: str | None = None
    ticket_price: float | None = None
    ticket_number: int | None = None
    cuisine: str | None = None
    line: str | None = None
    """Subway line."""
    bus_number: str | None = None
    load_limit: int | None = None
    """Seats per car (taxi, chartered car)."""
    car_number: int | None = None


class Activity(BaseModel):
    type: ActivityType
    description: str
    start_time: str = Field(pattern=_HH_MM)
    end_time: str = Field(pattern=_HH_MM)
    location_name: str
    cost: float
    """The place's own cost, without getting there."""
    transportation_to: LocalMode
    transportation_cost: float
    details: dict[str, Any]


class EndingPoint(BaseModel):
    type: EndingType
    description: str
    start_time: str = Field(pattern=_HH_MM)
    end_time: str = Field(pattern=_HH_MM)
    location_name: str
    """The station or hotel the day ends at."""
    cost: float
    transportation_to: LocalMode
    transportation_cost: float
    details: dict[str, Any]


class DailyPlan(BaseModel):
    day: int
    date: str = Field(pattern=_DATE)
    starting_point: str
    ending_point: EndingPoint
    activities: list[Activity]


class CostBreakdown(BaseModel):
    attractions: float
    intercity_transportation: float
    intracity_transportation: float
    accommodation: float
    meals: float
    other: float
    total: float


class Summary(BaseModel):
    total_days: int
    total_travelers: int
    departure: str
    destination: str
    """The destination city; the evaluator loads that city's sandbox."""
    total_budget: float
    calculated_total_cost: float
    is_within_budget: bool


class Itinerary(BaseModel):
    summary: Summary
    accommodation: Accommodation
    intercity_transport: IntercityTransport
    daily_plans: list[DailyPlan]
    cost_breakdown: CostBreakdown


class FinalTravelPlan(BaseModel):
    query_uid: str
    """The query's uid (T0001, G01-1, ...)."""
    itinerary: Itinerary


class PlanError(Exception):
    """Model text that holds no valid plan; `reason` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_JSON_FENCE = "```json"
_OFFICIAL_BLOCK = re.compile(r"```json(.*?)```", re.DOTALL)

Parsing = Literal["official", "lenient"]
PARSINGS: tuple[Parsing, ...] = ("official", "lenient")


def read_plan(text: str, parsing: Parsing, *, query_uid: str) -> FinalTravelPlan:
    """The plan in a model's answer, read the `official` way (`parse_plan_official`) or the `lenient` one
    (`parse_plan`, which also fills in a missing `query_uid`).

    Raises:
        PlanError: no plan in the text.
    """
    return parse_plan_official(text) if parsing == "official" else parse_plan(text, query_uid=query_uid)


def plan_text(answer: str) -> str:
    """The part of an answer the official pipeline reads as the plan: what lies in its first "```json" fence (up to
    the next closing fence), else the whole text; stripped. The official critique shows the first answer so."""
    if _JSON_FENCE in answer:
        block = _OFFICIAL_BLOCK.search(answer, answer.find(_JSON_FENCE))
        return block.group(1).strip() if block else ""
    return answer.strip()


def parse_plan_official(text: str) -> FinalTravelPlan:
    """The plan as the official pipeline reads an answer (`core/utils/output_handler.py`): when the text has a
    "```json" fence, what lies between the first one and the next closing fence (nothing: no plan); else the whole
    text. That must be JSON, or JSON once every single quote is made a double one (one retry), and an object that
    fits the schema, `query_uid` included.

    Raises:
        PlanError: the official pipeline would have put the answer among its failed plans.
    """
    part = plan_text(text)
    if not part and _JSON_FENCE in text:
        raise PlanError("a ```json fence with no closing fence or nothing in it")
    try:
        try:
            found = json.loads(part)
        except json.JSONDecodeError:
            found = json.loads(part.replace("'", '"'))
    except json.JSONDecodeError as exc:
        raise PlanError(f"not JSON, even with single quotes made double ({exc})") from None
    except RecursionError:
        raise PlanError("not JSON (nested too deeply)") from None
    except ValueError as exc:  # a number past the interpreter's 4,300 digits: no crash, no plan
        raise PlanError(f"not JSON ({str(exc).split(';')[0]})") from None
    if not isinstance(found, dict):
        raise PlanError(f"the JSON is {type(found).__name__}, not an object")
    try:
        return FinalTravelPlan.model_validate(storable(found))
    except ValidationError as exc:
        raise PlanError(_describe(exc)) from None


def parse_plan(text: str, *, query_uid: str | None = None) -> FinalTravelPlan:
    """The plan in a model's answer, read leniently (the `lenient` parsing): a JSON object, bare or in a fenced
    block, with text around it or not.

    The object taken is the first fenced block that is a JSON object, else the largest top-level JSON object in the
    text.

    Args:
        text: The model's answer (untrusted).
        query_uid: Filled in when the object has no `query_uid` (models often leave it out); never overrides one.

    Raises:
        PlanError: no JSON object in the text, or one that does not fit the schema (the first error, located).
    """
    found = extract_json_object(text)
    if query_uid is not None and "query_uid" not in found:
        found = {"query_uid": query_uid, **found}
    try:
        return FinalTravelPlan.model_validate(found)
    except ValidationError as exc:
        raise PlanError(_describe(exc)) from None


MAX_ANSWER_CHARS = 400_000
"""An answer longer than this is not searched for a plan (a week's plan, indented, is some tens of thousands)."""
MAX_BROKEN_STARTS = 500
"""Places a JSON object could start (a "{") that do not start one, after which the search stops: each failed try costs
up to the text's length (the decoder counts the lines before the error), so an answer crafted with a "{" every few
characters would take minutes; a real answer has a few, and a broken plan one per nested object."""


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object `parse_plan` reads from `text`: the first fenced block that is a JSON object, else the
    largest top-level JSON object in the text. The search is bounded (`MAX_ANSWER_CHARS`, `MAX_BROKEN_STARTS`), so a
    hostile answer costs a fraction of a second, and an object no result file could hold (an integer past 64 bits,
    nesting past 255 levels) is no plan.

    Raises:
        PlanError: there is none.
    """
    if len(text) > MAX_ANSWER_CHARS:
        raise PlanError(f"the answer is {len(text):,} characters, more than any plan ({MAX_ANSWER_CHARS:,}): not "
                        "searched for one")
    for block in _FENCE.findall(text):
        try:
            value = json.loads(block)
        except (ValueError, RecursionError):  # not JSON, too deep, a number too long: not a plan either
            continue
        if isinstance(value, dict):
            return storable(value)
    decoder = json.JSONDecoder()
    objects: list[tuple[int, dict[str, Any]]] = []  # (length in the text, object)
    first_error: ValueError | RecursionError | None = None
    broken = 0
    start = text.find("{")
    while start != -1 and broken < MAX_BROKEN_STARTS:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError as exc:  # JSONDecodeError, or a number past the interpreter's 4,300 digits
            first_error = first_error or exc
            broken += 1
            start = text.find("{", start + 1)
            continue
        except RecursionError as exc:  # too deep for the parser: retrying at each "{" inside would be quadratic
            first_error = first_error or exc
            break
        if isinstance(value, dict):
            objects.append((end - start, value))
        start = text.find("{", end)
    if objects:
        return storable(max(objects, key=lambda found: found[0])[1])
    if first_error is not None:
        reason = "nested too deeply" if isinstance(first_error, RecursionError) else str(first_error).split(";")[0]
        cut = f"; the search stopped after {broken} places that start none" if broken >= MAX_BROKEN_STARTS else ""
        raise PlanError(f"no valid JSON object in the answer (first error: {reason}){cut}")
    raise PlanError("no JSON object in the answer")


def storable(value: dict[str, Any]) -> dict[str, Any]:
    """`value`, when a run's result files can hold it; else PlanError (orjson, which writes them, takes integers of
    64 bits and 255 levels of nesting at most).

    Raises:
        PlanError: the object holds what no result file can.
    """
    try:
        orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise PlanError(f"the JSON object cannot be stored: {exc}") from None
    return value


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    found = "" if first["type"] == "missing" else f", got {json.dumps(first['input'], ensure_ascii=False)[:80]}"
    return f"plan does not fit the schema: {where or '(top level)'}: {first['msg']}{found}{more}"
