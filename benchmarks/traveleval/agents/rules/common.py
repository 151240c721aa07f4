"""What the official repository's two rule-based planners share (docs/fidelity/traveleval.md §9): the trip's
derived numbers, the preference filters, the candidate attractions, their clustering into days, the rooms, the
intracity transfers and the plan's JSON with its cost breakdown. Hours are floats (13.5 is 13:30), as there.

Distances are great-circle km from the sandbox's coordinates; the official planners ask Gaode for transit times and
fares and for the driving distances of the day route, which tripbench replaces by the offline transfer rule of
`offline.plan_builder.transfer` (walk or subway, a documented fare) and the great-circle shortest route.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from benchmarks.traveleval.evaluation.distance import haversine_km
from benchmarks.traveleval.evaluation.utility import TARGET_DENSITY, travel_style
from benchmarks.traveleval.offline.plan_builder import Place, transfer
from benchmarks.traveleval.sandbox.sandbox import Attraction, Hotel, Restaurant, Sandbox

_LONG_HAUL = ("上海广州", "上海成都", "上海深圳", "上海重庆", "北京广州", "北京成都", "北京深圳", "北京重庆",
              "南京广州", "南京成都", "南京深圳", "南京重庆", "广州成都", "广州杭州", "广州苏州", "广州重庆",
              "成都杭州", "成都武汉", "成都深圳", "成都苏州", "杭州深圳", "杭州重庆", "深圳苏州", "深圳重庆",
              "苏州重庆")
LONG_HAUL: frozenset[frozenset[str]] = frozenset(frozenset((pair[:2], pair[2:])) for pair in _LONG_HAUL)
"""The 25 city pairs the planners treat as a long intercity trip (day 1 spent travelling)."""
MIN_DENSITY = min(TARGET_DENSITY.values())
SUZHOU = "苏州"
"""Suzhou has no airport: a trip from or to it goes by train."""
Mode = Literal["train", "airplane"]
TRAIN: Mode = "train"
AIRPLANE: Mode = "airplane"


@dataclass(frozen=True, slots=True)
class Leg:
    """A train or a flight as the planners read them (hours as floats, cost per person)."""

    mode: Mode
    number: str
    kind: str
    """The plan's `transportation_to`: the train type, or 飞机."""
    origin: str
    destination: str
    begin: float
    end: float
    duration: float
    cost: float


def hours(text: str) -> float:
    """`H:MM` -> hours (`24:00` is 24.0)."""
    hour, _, minute = text.partition(":")
    return int(hour) + int(minute) / 60


def clock(value: float) -> str:
    """Hours -> `HH:MM`, clamped to one day (the official writes `H:MM` and lets 25:10 through)."""
    total = min(max(round(value * 60), 0), 24 * 60 - 1)
    return f"{total // 60:02d}:{total % 60:02d}"


def _listed(block: Any, key: str) -> list[str]:
    return [str(item) for item in (block or {}).get(key) or []] if isinstance(block, Mapping) else []


@dataclass(slots=True)
class Trip:
    """A query's numbers as the planners derive them."""

    uid: str
    start: str
    target: str
    budget: float
    people: int
    days: int
    dates: str
    long_haul: bool
    needed: float
    """How many attractions to pick: the style's target density times the days with time for them."""
    rooms: tuple[int, int, int]
    """(single rooms, two-person rooms, family rooms) for the party."""
    wanted: dict[str, list[str]]
    """Preferences by block (transportation, accommodations, diet, attractions, rhythm); mutable: the strict planner
    drops some to get under budget."""
    excluded: dict[str, list[str]]


BLOCKS = ("transportation", "accommodations", "diet", "attractions", "rhythm")


def trip_of(query: Mapping[str, Any]) -> Trip:
    days, people = int(query["days"]), int(query["people_number"])
    start, target = str(query["start_city"]), str(query["target_city"])
    long_haul = frozenset((start, target)) in LONG_HAUL
    density = TARGET_DENSITY.get(travel_style(query), 3.54)
    if density > 5:
        density -= 1
    if long_haul and days > 2:
        needed = density * (days - 2)  # day 1 and the last day go to the long journeys
    elif density > 4:
        needed = density * (days - 1)  # half of the first and last day
    else:
        needed = density * days
    return Trip(uid=str(query["uid"]), start=start, target=target, budget=float(query["budget"]), people=people,
                days=days, dates=str(query.get("dates") or ""), long_haul=long_haul, needed=needed,
                rooms=rooms_for(people, query.get("people_composition") or {}),
                wanted={block: _listed(query.get(block), "preferences") for block in BLOCKS},
                excluded={block: _listed(query.get(block), "constraints") for block in BLOCKS})


def rooms_for(people: int, party: Mapping[str, Any]) -> tuple[int, int, int]:
    """(single, two-person, family) rooms: pairs of adults share, one child makes a family room, two children with
    two grown-ups take two shared rooms, more fill family rooms of three first."""
    if people == 1:
        return 1, 0, 0
    if people == 2:
        return 0, 1, 0
    children = int(party.get("children", 0))
    grown = int(party.get("adults", 0)) + int(party.get("seniors", 0))
    if children == 0:
        return people - people // 2 * 2, people // 2, 0
    if children == 1:
        pairs = (people - 3) // 2
        return people - 3 - pairs * 2, pairs, 1
    if children == 2 and grown == 1:
        return 0, 0, 1
    if children == 2 and grown == 2 or children > 2 and people == 4:
        return 0, 2, 0
    family = people // 3
    return 0, (people - family * 3) // 2, family  # official: a remaining single traveller gets no room


def matches(texts: Iterable[str], words: Sequence[str]) -> bool:
    """Any word a substring of any text (the official pandas `str.contains`)."""
    return any(word in text for text in texts for word in words)


def hotel_offer(hotel: Hotel, rooms: tuple[int, int, int], nights: int) -> tuple[float, list[dict[str, Any]]] | None:
    """The price per night of the party's rooms and the plan's `room_type` list, None when stock is short.

    The official stock test is one if/elif chain: when the king rooms alone are too few, the double-bed and family
    stock are not checked (the shortfall goes to double-bed rooms whatever their stock)."""
    single_n, pair_n, family_n = rooms
    single, king, double, family = (hotel.room(kind) for kind in ("单人房", "大床房", "双人房", "家庭房"))
    assert single and king and double and family  # every hotel row has the four types
    kings_enough = True
    if single.stock < single_n:
        return None
    if king.stock < pair_n:
        kings_enough = False
    elif king.stock + double.stock < pair_n or family.stock < family_n:
        return None
    price = (single.price * single_n + king.price * min(king.stock, pair_n)
             + double.price * max(pair_n - king.stock, 0) + family.price * family_n)
    booked: list[dict[str, Any]] = []
    if single_n:
        booked.append(_booking("单人房", single_n, single.price, nights))
    if pair_n and kings_enough:
        booked.append(_booking("大床房", pair_n, king.price, nights))
    elif pair_n:
        if king.stock:
            booked.append(_booking("大床房", king.stock, king.price, nights))
        booked.append(_booking("双人房", pair_n - king.stock, double.price, nights))
    if family_n:
        booked.append(_booking("家庭房", family_n, family.price, nights))
    return float(price), booked


def _booking(kind: str, quantity: int, price: float, nights: int) -> dict[str, Any]:
    return {"type": kind, "quantity": quantity, "price_per_night": price, "nights": nights}


def preferred_hotels(sandbox: Sandbox, trip: Trip, *, use_wanted: bool = True) -> list[Hotel]:
    """Hotels whose name or feature has a wanted word (when any), without an excluded one."""
    wanted, excluded = trip.wanted["accommodations"], trip.excluded["accommodations"]
    return [hotel for hotel in sandbox.hotels(trip.target)
            if (not use_wanted or not wanted or matches((hotel.name, hotel.featurehoteltype), wanted))
            and not matches((hotel.name, hotel.featurehoteltype), excluded)]


def restaurants_by_price(sandbox: Sandbox, trip: Trip, *, use_wanted: bool) -> list[Restaurant]:
    """The city's restaurants, cheapest first: with a wanted cuisine in the name, cuisine or dishes (when asked);
    official quirk: the exclusions applied are the *attraction* constraints, never the excluded cuisines."""
    wanted, excluded = trip.wanted["diet"], trip.excluded["attractions"]
    chosen = [r for r in sandbox.restaurants(trip.target)
              if (not use_wanted or not wanted or matches((r.name, r.cuisine, r.recommendedfood), wanted))
              and not matches((r.name, r.cuisine), excluded)]
    return sorted(chosen, key=lambda r: r.price)


def allowed_modes(trip: Trip, train_words: Sequence[str]) -> list[Mode]:
    """Trains if one of `train_words` is wanted, else flights if 飞机 is, else both; then 高铁 excluded drops
    trains, or else 飞机 excluded drops flights; a trip from or to Suzhou goes by train."""
    wanted, excluded = trip.wanted["transportation"], trip.excluded["transportation"]
    modes = [TRAIN] if any(w in wanted for w in train_words) else [AIRPLANE] if "飞机" in wanted else [TRAIN, AIRPLANE]
    if "高铁" in excluded and TRAIN in modes:
        modes.remove(TRAIN)
    elif "飞机" in excluded and AIRPLANE in modes:
        modes.remove(AIRPLANE)
    return [TRAIN] if SUZHOU in (trip.start, trip.target) else modes


def legs_between(sandbox: Sandbox, trip: Trip, modes: Sequence[Mode]) -> list[Leg]:
    """Trains, then flights (of `modes`), both ways, in file order; legs without a price are left out."""
    legs: list[Leg] = []
    for mode in modes:
        if mode == TRAIN:
            legs += [Leg(TRAIN, t.train_id, t.train_type, t.from_station, t.to_station, hours(t.begin_time),
                         hours(t.end_time), t.duration, t.cost)
                     for t in sandbox.trains(trip.start, trip.target, both_ways=True)]
        else:
            legs += [Leg(AIRPLANE, f.flight_id, "飞机", f.from_airport, f.to_airport, hours(f.begin_time),
                         hours(f.end_time), f.duration, f.cost)
                     for f in sandbox.flights(trip.start, trip.target, both_ways=True)]
    return [leg for leg in legs if leg.cost is not None and not math.isnan(leg.cost)]


def candidate_attractions(sandbox: Sandbox, trip: Trip, *, preferred_by: Literal["star", "price"]) -> list[Attraction]:
    """Step 1: the attractions to visit. Affordable ones (price at most what the budget leaves per attraction and
    person after two of the cheapest intercity fares); half of the count from the wanted types (none excluded),
    best first by `preferred_by` (descending), the rest the best-starred others."""
    cheapest = min((leg.cost for leg in legs_between(sandbox, trip, (TRAIN, AIRPLANE))), default=math.inf)
    ceiling = max((trip.budget - cheapest * 2 * trip.people) / trip.needed / trip.people, 0.0)
    affordable = [a for a in sandbox.attractions(trip.target) if a.price <= ceiling]
    wanted, excluded = trip.wanted["attractions"], trip.excluded["attractions"]
    preferred = [a for a in affordable if (not wanted or matches((a.type,), wanted))
                 and not matches((a.type,), excluded)]
    taken = {a.id for a in preferred}
    backup = [a for a in affordable if a.id not in taken]
    if not backup:
        preferred, backup = backup, preferred
    by_star = lambda a: -(a.star if a.star is not None and not math.isnan(a.star) else -math.inf)  # noqa: E731
    preferred.sort(key=by_star if preferred_by == "star" else (lambda a: -a.price))
    backup.sort(key=by_star)
    n_preferred = min(len(preferred), int(trip.needed // 2))
    return preferred[:n_preferred] + backup[:round(trip.needed - n_preferred)]


def kmeans(points: np.ndarray, k: int, seed: str, restarts: int = 10) -> list[int]:
    """Lloyd's k-means, k-means++ starts, the best of `restarts` (the official calls scikit-learn's KMeans with
    `random_state=42, n_init=10`; the seed here is the query's uid, so labels may differ from scikit-learn's)."""
    rng = np.random.default_rng([ord(ch) for ch in seed])
    best: tuple[float, np.ndarray] | None = None
    for _ in range(restarts):
        centers = points[[int(rng.integers(len(points)))]]
        while len(centers) < k:
            gap = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2).min(axis=1)
            pick = int(rng.choice(len(points), p=gap / gap.sum())) if gap.sum() > 0 else int(rng.integers(len(points)))
            centers = np.vstack([centers, points[pick]])
        labels = np.zeros(len(points), dtype=int)
        for _ in range(300):
            labels = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
            moved = np.array([points[labels == c].mean(axis=0) if (labels == c).any() else centers[c]
                              for c in range(k)])
            if np.allclose(moved, centers):
                break
            centers = moved
        inertia = float(((points - centers[labels]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, labels)
    assert best is not None
    return [int(label) for label in best[1]]


def cluster_attractions(attractions: Sequence[Attraction], trip: Trip) -> list[list[Attraction]]:
    """Step 2: one cluster per sightseeing day (a day fewer on a long trip), by k-means on (lon, lat); clusters over
    twice the day's density (at most 8) shed their attractions nearest another cluster's centre with room."""
    if not attractions:
        return []
    k = min(len(attractions), trip.days - 1 if trip.long_haul else trip.days)
    labels = kmeans(np.array([[a.lon, a.lat] for a in attractions]), k, f"{trip.uid}")
    clusters = [[a for a, label in zip(attractions, labels, strict=True) if label == c] for c in range(k)]
    density = max(trip.needed / trip.days, MIN_DENSITY)
    if max(len(c) for c in clusters) <= density * 2 or trip.days == 2:
        return clusters
    return _rebalance(clusters, min(int(density * 2), 8))


def _centre(cluster: Sequence[Attraction]) -> tuple[float, float]:
    if not cluster:
        return 0.0, 0.0
    return sum(a.lat for a in cluster) / len(cluster), sum(a.lon for a in cluster) / len(cluster)


def _rebalance(clusters: list[list[Attraction]], cap: int) -> list[list[Attraction]]:
    centres = [_centre(c) for c in clusters]
    while True:
        over = [i for i, c in enumerate(clusters) if len(c) > cap]
        moved = False
        for i in over:
            while len(clusters[i]) > cap:
                moves = [(haversine_km((a.lat, a.lon), centres[j]), n, j) for n, a in enumerate(clusters[i])
                         for j in range(len(clusters)) if j not in over and len(clusters[j]) < cap]
                if not moves:
                    break
                _, n, j = min(moves)
                clusters[j].append(clusters[i].pop(n))
                centres[j] = _centre(clusters[j])
                moved = True
        if not over or not moved:  # official: loops forever when nothing can move; here it stops
            return clusters


def days_of_clusters(clusters: list[list[Attraction]], trip: Trip, shuffle: Any) -> dict[int, list[Attraction]]:
    """Clusters to days by size, then mean recommended hours: a long trip's smallest cluster on the last day and the
    others on days 2.. in random order; a short trip's smallest on day 1, the next on the last day, the others in
    random order between. `shuffle` is the query's seeded `random.Random().shuffle`."""
    ranked = sorted(clusters, key=lambda c: (len(c), sum((a.recommendmintime + a.recommendmaxtime) / 2 for a in c)
                                             / max(len(c), 1)))
    days: dict[int, list[Attraction]] = {day: [] for day in range(1, trip.days + 1)}
    if not ranked:
        return days
    middle = list(range(2, trip.days))
    shuffle(middle)
    if trip.long_haul:
        days[trip.days] = ranked[0]
        rest = ranked[1:]
    else:
        days[1] = ranked[0]
        if len(ranked) > 1:
            days[trip.days] = ranked[1]
        rest = ranked[2:]
    for cluster, day in zip(rest, middle, strict=False):
        days[day] = cluster
    return days


def shortest_order(stops: Sequence[Attraction]) -> list[Attraction]:
    """The day's route as the official `calculate_optimal_route`: the cluster's first and last attraction stay the
    ends, the ones between go in the order of least total km (great-circle here, Gaode driving km there)."""
    n = len(stops)
    if n < 4:
        return list(stops)
    km = [[haversine_km((a.lat, a.lon), (b.lat, b.lon)) for b in stops] for a in stops]
    best: dict[tuple[int, int], tuple[float, int]] = {(1, 0): (0.0, -1)}
    for mask in range(1, 1 << n, 2):  # every visited set holds the start
        for last in range(n):
            here = best.get((mask, last))
            if here is None:
                continue
            for nxt in range(1, n):
                if mask >> nxt & 1 or (nxt == n - 1 and mask | 1 << nxt != (1 << n) - 1):
                    continue  # the end is entered last
                key, length = (mask | 1 << nxt, nxt), here[0] + km[last][nxt]
                if key not in best or length < best[key][0]:
                    best[key] = (length, last)
    order, mask, last = [], (1 << n) - 1, n - 1
    while last != -1:
        order.append(stops[last])
        last, mask = best[(mask, last)][1], mask & ~(1 << last)
    return order[::-1]


def move(origin: tuple[float, float], destination: tuple[float, float], people: int) -> tuple[str, float, float]:
    """(mode, minutes, fare for the group) between two points (`offline.plan_builder.transfer`)."""
    mode, minutes, fare = transfer(Place("", *origin), Place("", *destination), people)
    return mode, float(minutes), float(fare)


def assignment(cost: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Minimum-cost assignment of a rectangular matrix (Hungarian method, shortest augmenting paths): (row, column)
    pairs, min(rows, columns) of them, by row (the official uses scipy's `linear_sum_assignment`; ties may differ)."""
    if not cost or not cost[0]:
        return []
    if len(cost) > len(cost[0]):
        return sorted((r, c) for c, r in assignment([list(col) for col in zip(*cost, strict=True)]))
    rows, cols = len(cost), len(cost[0])
    u, v, match, way = [0.0] * (rows + 1), [0.0] * (cols + 1), [0] * (cols + 1), [0] * (cols + 1)
    for row in range(1, rows + 1):
        match[0], col0 = row, 0
        slack, used = [math.inf] * (cols + 1), [False] * (cols + 1)
        while True:
            used[col0] = True
            r0, delta, col1 = match[col0], math.inf, 0
            for col in range(1, cols + 1):
                if not used[col]:
                    here = cost[r0 - 1][col - 1] - u[r0] - v[col]
                    if here < slack[col]:
                        slack[col], way[col] = here, col0
                    if slack[col] < delta:
                        delta, col1 = slack[col], col
            for col in range(cols + 1):
                if used[col]:
                    u[match[col]] += delta
                    v[col] -= delta
                else:
                    slack[col] -= delta
            col0 = col1
            if match[col0] == 0:
                break
        while col0:
            col1 = way[col0]
            match[col0] = match[col1]
            col0 = col1
    return sorted((match[col] - 1, col - 1) for col in range(1, cols + 1) if match[col])


@dataclass(slots=True)
class Itinerary:
    """What both planners hand to `plan_json`: legs, hotel, rooms and each day's activities and ending point."""

    trip: Trip
    out: Leg
    back: Leg
    hotel: Hotel
    rooms: list[dict[str, Any]]
    days: list[tuple[list[dict[str, Any]], dict[str, Any]]]


def activity(kind: Literal["attraction", "meal"], place: Attraction | Restaurant, start: float, end: float,
             mode: str, minutes: float, fare: float, people: int) -> dict[str, Any]:
    """An activity as the planners write it: the ticket or meal price times the party, the transfer to it."""
    if isinstance(place, Attraction):
        details: dict[str, Any] = {"transport_time": f"{minutes}", "line": mode,
                                   "ticket_type": "成人票" if place.price else "免费", "ticket_price": place.price,
                                   "ticket_number": people}
        description = f"参观{place.name}"
    else:
        details = {"transport_time": f"{minutes}", "line": mode, "cuisine": place.recommendedfood}
        description = f"品尝{place.name}"
    return {"type": kind, "description": description, "start_time": clock(start), "end_time": clock(end),
            "location_name": place.name, "cost": place.price * people, "transportation_to": mode,
            "transportation_cost": fare, "details": details}


def ending(trip: Trip, day: int, back: Leg, hotel: Hotel, start: float, end: str, mode: str, minutes: float,
           fare: float) -> dict[str, Any]:
    """A day's ending point: the hotel, or on the last day the station of the way home."""
    last = day == trip.days
    return {"type": "intercity_transport" if last else "accommodation",
            "description": f"前往{back.origin}乘坐{back.kind}返回{trip.start}" if last else "返回酒店休息",
            "start_time": clock(start % 24), "end_time": clock(back.begin) if last else end,
            "location_name": back.origin if last else hotel.name, "cost": 0, "transportation_to": mode,
            "transportation_cost": fare, "details": {"transport_time": f"{minutes}", "line": mode}}


def plan_json(plan: Itinerary) -> dict[str, Any]:
    """The `FinalTravelPlan` with the planners' cost breakdown: intracity fares count when below both legs'
    fares; the total is hotel + intercity + tickets + meals + intracity."""
    trip, out, back = plan.trip, plan.out, plan.back
    hotel_cost = sum(r["quantity"] * r["price_per_night"] * r["nights"] for r in plan.rooms)
    intercity = (out.cost + back.cost) * trip.people
    costs = {"attractions": 0.0, "meals": 0.0, "intracity_transportation": 0.0}
    daily = []
    for number, (activities, end) in enumerate(plan.days, start=1):
        for item in activities:
            costs["attractions" if item["type"] == "attraction" else "meals"] += item["cost"]
        for item in (*activities, end):
            if item["transportation_cost"] < out.cost and item["transportation_cost"] < back.cost:
                costs["intracity_transportation"] += item["transportation_cost"]
        daily.append({"day": number, "date": _date(trip.dates, number),
                      "starting_point": out.origin if number == 1 else plan.hotel.name, "ending_point": end,
                      "activities": activities})
    total = hotel_cost + intercity + sum(costs.values())
    return {"query_uid": trip.uid, "itinerary": {
        "summary": {"total_days": trip.days, "total_travelers": trip.people, "departure": trip.start,
                    "destination": trip.target, "total_budget": trip.budget, "calculated_total_cost": total,
                    "is_within_budget": total <= trip.budget},
        "accommodation": {"hotel_name": plan.hotel.name, "room_type": plan.rooms, "total_cost": hotel_cost},
        "intercity_transport": {"transport_type": [_leg(out, trip, "出发前往", out.destination),
                                                   _leg(back, trip, "返回", back.destination)],
                                "total_cost": intercity},
        "daily_plans": daily,
        "cost_breakdown": {"attractions": costs["attractions"], "intercity_transportation": intercity,
                           "intracity_transportation": costs["intracity_transportation"],
                           "accommodation": hotel_cost, "meals": costs["meals"], "other": 0, "total": total}}}


def _leg(leg: Leg, trip: Trip, verb: str, place: str) -> dict[str, Any]:
    return {"description": f"{leg.origin}{verb}{leg.destination}", "start_time": clock(leg.begin),
            "end_time": clock(leg.end), "location_name": place, "cost": leg.cost * trip.people,
            "transportation_to": leg.kind, "transportation_cost": leg.cost * trip.people,
            "details": {"transport_number": leg.number, "price": leg.cost, "number": trip.people}}


def _date(dates: str, day: int) -> str:
    """The day's date from the query's `YYYY-MM-DD to YYYY-MM-DD` (empty when the query has none)."""
    first = dates.split(" to ")[0].strip()
    try:
        return (datetime.date.fromisoformat(first) + datetime.timedelta(days=day - 1)).isoformat()
    except ValueError:
        return ""
