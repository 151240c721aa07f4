"""The sandbox tools the ReAct agents call: trains, flights, hotels, attractions, restaurants, subway lines, places
and distances of the ten cities, answered from the TravelEval sandbox as short text observations.

The official code gives its agents no tools (its "ReAct" is one call that imagines its observations), so these are
tripbench's own. Arguments are model output: every one is checked (known names, types, a known city) before it
reaches the sandbox, which binds it, never formats it into SQL. A bad call is an observation the model can act on,
never an exception, and is classed (`ToolResult.error`) so the agents can stop a loop of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from benchmarks.traveleval.sandbox.cities import CITY_DIRS, city_name
from benchmarks.traveleval.sandbox.sandbox import Sandbox

PAGE_SIZE = 20
"""Rows per observation of the list tools; `page` reads further."""
INVALID_ACTION: Final = "invalid_action"
ARGUMENT_ERROR: Final = "argument_error"
ToolError = Literal["invalid_action", "argument_error"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    observation: str
    error: ToolError | None = None
    """None for an answer (an empty result included), else what was wrong with the call."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: type
    """str, int or float (an int is accepted for a float)."""
    help: str
    required: bool = True

    @property
    def json_type(self) -> str:
        """The type as JSON names it."""
        return {str: "string", int: "integer", float: "number"}[self.kind]


class ArgumentError(ValueError):
    """A call's arguments do not fit the tool; the message is the observation."""


Args = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    summary: str
    params: tuple[Param, ...]
    run: Callable[[Sandbox, Args], str]

    def signature(self) -> str:
        """`name {"city": str, "page"?: int}`: how the prompt shows the tool."""
        fields = ", ".join(f'"{p.name}"{"" if p.required else "?"}: {p.json_type}' for p in self.params)
        return f"{self.name} {{{fields}}}"


def _city(sandbox: Sandbox, value: str) -> str:
    if sandbox.city_dir(value) not in sandbox.cities():
        raise ArgumentError(f"Unknown city {value!r}. Known cities: {', '.join(CITY_DIRS)}.")
    return value


def _page(rows: Sequence[str], args: Args, header: str, what: str) -> str:
    """One page of rows under a header line, saying how many there are and how to read on."""
    if not rows:
        return f"No {what} found."
    page = args.get("page", 1)
    pages = math.ceil(len(rows) / PAGE_SIZE)
    if not 1 <= page <= pages:
        raise ArgumentError(f"page must be between 1 and {pages}.")
    shown = rows[(page - 1) * PAGE_SIZE:page * PAGE_SIZE]
    more = f" Page {page} of {pages}: add \"page\": {page + 1} for more." if page < pages else ""
    return f"{len(rows)} {what}.{more}\n{header}\n" + "\n".join(shown)


def _clock(text: str) -> str:
    """`8:30` -> `08:30`, as a plan writes times."""
    hours, _, minutes = text.partition(":")
    return f"{hours.zfill(2)}:{minutes}" if minutes else text


def _trains(sandbox: Sandbox, args: Args) -> str:
    trains = sandbox.trains(_city(sandbox, args["from_city"]), _city(sandbox, args["to_city"]))
    rows = [f"{t.train_id} | {t.train_type} | {t.from_station} {_clock(t.begin_time)} -> {t.to_station} "
            f"{_clock(t.end_time)} | {t.duration:g} h | {t.cost:g}" for t in trains]
    return _page(rows, args, "number | type | departure -> arrival | duration | price per ticket (RMB)", "trains")


def _flights(sandbox: Sandbox, args: Args) -> str:
    flights = sandbox.flights(_city(sandbox, args["from_city"]), _city(sandbox, args["to_city"]))
    rows = [f"{f.flight_id} | {f.from_airport} {_clock(f.begin_time)} -> {f.to_airport} {_clock(f.end_time)} | "
            f"{f.duration:g} h | {f.cost:g}" for f in flights]
    return _page(rows, args, "number | departure -> arrival | duration | price per ticket (RMB)", "flights")


def _hotels(sandbox: Sandbox, args: Args) -> str:
    feature, max_price = args.get("feature"), args.get("max_price")
    rows = []
    for hotel in sandbox.hotels(_city(sandbox, args["city"])):
        if feature is not None and feature not in hotel.featurehoteltype:
            continue
        rooms = [room for room in hotel.rooms if room.stock > 0 and (max_price is None or room.price <= max_price)]
        if rooms:
            offers = ", ".join(f"{room.type} {room.price} ({room.stock} left)" for room in rooms)
            rows.append(f"{hotel.name} | {hotel.featurehoteltype} | {offers}")
    return _page(rows, args, "hotel | feature | room type price per night in RMB (rooms left)", "hotels")


def _attractions(sandbox: Sandbox, args: Args) -> str:
    wanted = args.get("type")
    rows = [f"{a.name} | {'、'.join(a.types)} | {_clock(a.opentime)}-{_clock(a.endtime)} | {a.price:g} | "
            f"{a.recommendmintime:g}-{a.recommendmaxtime:g} h | {'-' if a.star is None else f'{a.star:g}'}"
            for a in sandbox.attractions(_city(sandbox, args["city"]))
            if wanted is None or any(wanted in kind for kind in a.types)]
    return _page(rows, args, "attraction | types | open | ticket (RMB) | recommended visit | rating", "attractions")


def _restaurants(sandbox: Sandbox, args: Args) -> str:
    cuisine, max_price = args.get("cuisine"), args.get("max_price")
    rows = [f"{r.name} | {r.cuisine} | {r.price:g} | {_clock(r.opentime)}-{_clock(r.endtime)} | "
            f"{r.recommendedfood.strip() or '-'}"
            for r in sandbox.restaurants(_city(sandbox, args["city"]))
            if (cuisine is None or cuisine in r.cuisine) and (max_price is None or r.price <= max_price)]
    return _page(rows, args, "restaurant | cuisine | price per person (RMB) | open | recommended dishes",
                 "restaurants")


def _subway(sandbox: Sandbox, args: Args) -> str:
    station = args.get("station")
    rows = [f"{line.name} | {' - '.join(s.name for s in line.stations)}"
            for line in sandbox.subway_lines(_city(sandbox, args["city"]))
            if station is None or any(station in s.name for s in line.stations)]
    return _page(rows, args, "line | stations in order", "subway lines")


def _places(sandbox: Sandbox, args: Args) -> str:
    city, name = _city(sandbox, args["city"]), args["name"]
    if not name:
        raise ArgumentError("name must not be empty.")
    rows = [found for found in sandbox.poi_names(city) if name in found]
    return _page(rows, args, "place (exact name)", f"places whose name contains {name!r}")


def _distance(sandbox: Sandbox, args: Args) -> str:
    city = _city(sandbox, args["city"])
    ends = []
    for key in ("origin", "destination"):
        position = sandbox.poi_position(city, args[key])
        if position is None:
            raise ArgumentError(f"No place named {args[key]!r} in {city}; find_place gives exact names.")
        ends.append(position)
    km = haversine_km(*ends[0], *ends[1])
    return f"{args['origin']} -> {args['destination']}: {km:.1f} km in a straight line."


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in km on a sphere of radius 6,371 km."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    a = (math.sin((phi2 - phi1) / 2) ** 2
         + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0 * math.asin(math.sqrt(a))


_PAGE = Param("page", int, "1 for the first rows (default)", required=False)
_CITY = Param("city", str, "a city, e.g. 上海")
TOOLS: Mapping[str, Tool] = {tool.name: tool for tool in (
    Tool("search_trains", "trains from one city to another, with stations, times and prices",
         (Param("from_city", str, "departure city"), Param("to_city", str, "arrival city"), _PAGE), _trains),
    Tool("search_flights", "flights from one city to another, with airports, times and prices",
         (Param("from_city", str, "departure city"), Param("to_city", str, "arrival city"), _PAGE), _flights),
    Tool("search_hotels", "hotels of a city with a room free, their feature and room prices",
         (_CITY, Param("feature", str, "a hotel feature, e.g. 免费停车", required=False),
          Param("max_price", float, "highest price per room and night", required=False), _PAGE), _hotels),
    Tool("search_attractions", "attractions of a city: types, opening hours, ticket, recommended visit time",
         (_CITY, Param("type", str, "an attraction type, e.g. 历史古迹", required=False), _PAGE), _attractions),
    Tool("search_restaurants", "restaurants of a city: cuisine, price per person, opening hours",
         (_CITY, Param("cuisine", str, "a cuisine, e.g. 本帮菜", required=False),
          Param("max_price", float, "highest price per person", required=False), _PAGE), _restaurants),
    Tool("search_subway", "subway lines of a city and their stations",
         (_CITY, Param("station", str, "only lines through a station whose name contains this", required=False),
          _PAGE), _subway),
    Tool("find_place", "exact names of the places (stations, airports, attractions, hotels, restaurants) whose "
         "name contains a text", (_CITY, Param("name", str, "part of the name"), _PAGE), _places),
    Tool("get_distance", "straight-line distance between two places of a city (exact names)",
         (_CITY, Param("origin", str, "a place's exact name"), Param("destination", str, "a place's exact name")),
         _distance),
)}

TOOLS_TEXT = "\n".join(f"{tool.signature()}: {tool.summary}." for tool in TOOLS.values())
"""The tools as the ReAct prompt lists them (`?` marks an optional argument)."""


def _check(tool: Tool, arguments: Args) -> None:
    known = {param.name: param for param in tool.params}
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise ArgumentError(f"{tool.name} takes no argument {', '.join(unknown)}; its arguments: "
                            f"{tool.signature()}.")
    for param in tool.params:
        if param.name not in arguments:
            if param.required:
                raise ArgumentError(f"{tool.name} needs {param.name!r} ({param.help}): {tool.signature()}.")
            continue
        value = arguments[param.name]
        kinds: tuple[type, ...] = (int, float) if param.kind is float else (param.kind,)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ArgumentError(f"{tool.name}: {param.name!r} must be a JSON {param.json_type}, not {value!r}.")


def run_tool(sandbox: Sandbox, name: str, arguments: Args) -> ToolResult:
    """Answers one tool call.

    Args:
        sandbox: The run's sandbox.
        name: The tool the model named.
        arguments: Its arguments, as the model wrote them (untrusted).
    """
    tool = TOOLS.get(name)
    if tool is None:
        return ToolResult(f"There is no tool {name!r}. The tools are: {', '.join(TOOLS)}, and finish.",
                          INVALID_ACTION)
    try:
        _check(tool, arguments)
        return ToolResult(tool.run(sandbox, arguments))
    except ArgumentError as exc:
        return ToolResult(str(exc), ARGUMENT_ERROR)


def intercity_stations(sandbox: Sandbox, start_city: str, target_city: str) -> list[str]:
    """The stations and airports a plan between two cities must use, as the official agents are told: the stations
    of the trains from `start_city` to `target_city`, then every airport of either city (the official code lists
    the twelve airports of the flights file by hand and keeps those whose name starts with either city's name).
    The official code puts them in a Python set; here they keep file order, so the prompt is deterministic."""
    stations = dict.fromkeys(name for train in sandbox.trains(start_city, target_city)
                             for name in (train.from_station, train.to_station))
    return [*stations, *airports(sandbox, start_city), *airports(sandbox, target_city)]


def airports(sandbox: Sandbox, city: str) -> list[str]:
    """The airports of a city in the flights file (none for 苏州), sorted."""
    name = city_name(city)
    return sorted({airport for other in sandbox.cities() for flight in sandbox.flights(city, other, both_ways=True)
                   for airport in (flight.from_airport, flight.to_airport) if airport.startswith(name)})
