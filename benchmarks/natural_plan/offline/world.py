"""A small generated Natural Plan world: records of the three tasks in the official file format, with prompts in the
official style and gold plans that the official rules score as solved. The demo runs it (no download); tests use
it for cases the staged samples do not hold.

Everything is a pure function of the seed. The wording of the prompts is ours (modelled on the official files); the
answer formats are the official ones the scoring rules read.
"""

from __future__ import annotations

import datetime
import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.natural_plan.dataset import FILE_STEMS

CITIES = ("Porto", "Lisbon", "Madrid", "Seville", "Paris", "Lyon", "Nice", "Geneva", "Zurich", "Milan", "Venice",
          "Florence", "Vienna", "Prague", "Berlin", "Hamburg", "Munich", "Oslo", "Stockholm", "Helsinki", "Riga",
          "Tallinn", "Warsaw", "Krakow", "Budapest", "Dubrovnik", "Split", "Athens", "Dublin", "Reykjavik")
PLACES = ("Union Square", "Chinatown", "Mission District", "Presidio", "Nob Hill", "Marina District", "Bayview",
          "Haight-Ashbury", "Sunset District", "Richmond District", "North Beach", "Embarcadero")
PEOPLE = ("Anna", "Ben", "Carla", "David", "Emma", "Felix", "Grace", "Henry", "Iris", "James", "Kate", "Liam")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
SHOTS = 5
TRIP_INTRO = ("You are an expert at planning trips. You are given a few constraints regarding the cities to visit "
              "and the durations of staying at each city. You are also given the flight information between the "
              "cities. Here are a few example tasks and solutions:\n\n")
MEETING_INTRO = ("You are visiting San Francisco for the day and want to meet as many friends as possible. Solve the "
                 "problem by considering various different schedules and picking the best one to optimize your "
                 "goals.\n\n")
CALENDAR_INTRO = ("You are an expert at scheduling meetings. You are given a few constraints on the existing schedule "
                  "of each participant, the meeting duration, and possibly some preferences on the meeting time. "
                  "Note there exists a solution that works with existing schedule of every participant. Here are a "
                  "few example tasks and solutions:\n\n")


@dataclass(frozen=True, slots=True)
class NaturalPlanWorld:
    folder: Path
    files: dict[str, Path]
    """Task -> its records file (`<stem>.json`)."""


def generate_world(folder: Path, *, seed: int = 0, per_task: int = 6) -> NaturalPlanWorld:
    """Writes `per_task` records of each task to `folder/<stem>.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for task, make in (("trip", trip_record), ("meeting", meeting_record), ("calendar", calendar_record)):
        rng = random.Random(f"{seed}\x1f{task}")
        made = [make(rng) for _ in range(per_task + SHOTS)]
        records = {f"{FILE_STEMS[task]}_example_{n}": _with_shots(record, made[per_task:], task)
                   for n, record in enumerate(made[:per_task])}
        files[task] = folder / f"{FILE_STEMS[task]}.json"
        files[task].write_text(json.dumps(records, indent=1), encoding="utf-8")
    return NaturalPlanWorld(folder, files)


def _with_shots(record: dict[str, Any], shots: Sequence[dict[str, Any]], task: str) -> dict[str, Any]:
    """The record with its 5-shot prompt: the task's instructions, solved examples, then the record's own task."""
    intro = {"trip": TRIP_INTRO, "meeting": MEETING_INTRO, "calendar": CALENDAR_INTRO}[task]
    examples = "".join(f"TASK: {shot['prompt_0shot']}\nSOLUTION: {_answer_text(shot)}\n\n\n" for shot in shots)
    return {**record, "prompt_5shot": f"{intro}{examples}TASK: {record['prompt_0shot']}\nSOLUTION:"}


def _answer_text(record: dict[str, Any]) -> str:
    plan = record["golden_plan"]
    return " ".join(plan) if isinstance(plan, list) else str(plan)


def trip_record(rng: random.Random) -> dict[str, Any]:
    cities = rng.sample(CITIES, rng.randint(3, 5))
    durations = [rng.randint(2, 5) for _ in cities]
    total = sum(durations) - (len(cities) - 1)
    legs = set(itertools.pairwise(cities))
    while len(legs) < len(cities) + 2:  # a few flights the plan does not take
        legs.add(tuple(rng.sample(cities, 2)))  # type: ignore[arg-type]
    flights = ", ".join(f"{a} and {b}" for a, b in sorted(legs))
    wants = " ".join(f"You want to spend {days} days in {city}." for city, days in zip(cities, durations))
    prompt = (f"You plan to visit {len(cities)} European cities for {total} days in total. You only take direct "
              f"flights to commute between cities. {wants}\n\nHere are the cities that have direct flights:\n"
              f"{flights}.\n\nFind a trip plan of visiting the cities for {total} days by taking direct flights to "
              "commute between them.")
    return {"num_cities": str(len(cities)), "cities": "**".join(cities), "durations": "**".join(map(str, durations)),
            "prompt_0shot": prompt, "golden_plan": trip_plan_text(list(zip(cities, durations)))}


def trip_plan_text(stays: Sequence[tuple[str, int]]) -> str:
    """A trip plan in the official answer format: a span per stay, a flight line between stays."""
    total = sum(days for _, days in stays) - (len(stays) - 1)
    lines = [f"Here is the trip plan for visiting the {len(stays)} European cities for {total} days:", ""]
    day = 1
    for n, (city, days) in enumerate(stays):
        if n == 0:
            lines.append(f"**Day {day}-{day + days - 1}:** Arriving in {city} and visit {city} for {days} days.")
        else:
            lines.append(f"**Day {day}:** Fly from {stays[n - 1][0]} to {city}.")
            lines.append(f"**Day {day}-{day + days - 1}:** Visit {city} for {days} days.")
        day += days - 1
    return "\n".join(lines)


def calendar_record(rng: random.Random) -> dict[str, Any]:
    people = rng.sample(PEOPLE, rng.randint(2, 4))
    days = DAYS[: rng.randint(1, 3)]
    minutes = rng.choice((30, 60))
    busy = {name: {day: _busy_blocks(rng) for day in days} for name in people}
    slot = _first_free(busy, days, minutes)
    if slot is None:  # everyone booked solid: free the last hour of the last day
        for name in people:
            busy[name][days[-1]] = [(a, b) for a, b in busy[name][days[-1]] if b <= 16 * 60]
        slot = _first_free(busy, days, minutes)
    assert slot is not None
    day, start = slot
    schedules = "".join(
        f"{name} has meetings on " + "; ".join(f"{d} during " + ", ".join(f"{_hm(a)} to {_hm(b)}" for a, b in blocks)
                                                 for d, blocks in busy[name].items() if blocks) + "; \n"
        if any(busy[name].values()) else f"{name} is free the entire week; \n" for name in people)
    names = ", ".join(people[:-1]) + f" and {people[-1]}"
    length = "half an hour" if minutes == 30 else "one hour"
    prompt = (f"You need to schedule a meeting for {names} for {length} between the work hours of 9:00 to 17:00 on "
              f"{_either(days)}. \n\nHere are the existing schedules for everyone during the days: \n"
              f"{schedules}\nFind a time that works for everyone's schedule and constraints. ")
    return {"num_people": str(len(people)), "num_days": str(len(days)), "duration": str(minutes // 30 / 2),
            "prompt_0shot": prompt,
            "golden_plan": f"Here is the proposed time: {day}, {_hm(start)} - {_hm(start + minutes)} "}


def _either(days: Sequence[str]) -> str:
    return days[0] if len(days) == 1 else "either " + ", ".join(days[:-1]) + f" or {days[-1]}"


def _busy_blocks(rng: random.Random) -> list[tuple[int, int]]:
    starts = sorted(rng.sample(range(9 * 60, 17 * 60, 30), rng.randint(2, 6)))
    blocks: list[tuple[int, int]] = []
    for start in starts:
        end = min(start + rng.choice((30, 60, 90)), 17 * 60)
        if blocks and start <= blocks[-1][1]:
            blocks[-1] = (blocks[-1][0], max(blocks[-1][1], end))
        else:
            blocks.append((start, end))
    return blocks


def _first_free(busy: dict[str, dict[str, list[tuple[int, int]]]], days: Sequence[str],
                minutes: int) -> tuple[str, int] | None:
    for day in days:
        for start in range(9 * 60, 17 * 60 - minutes + 1, 30):
            if all(end <= start or begin >= start + minutes for blocks in busy.values() for begin, end in blocks[day]):
                return day, start
    return None


def _hm(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def meeting_record(rng: random.Random) -> dict[str, Any]:
    places = rng.sample(PLACES, rng.randint(3, 5))
    start, others = places[0], places[1:]
    matrix = {a: {b: rng.randint(5, 30) for b in places if b != a} for a in places}
    people = rng.sample(PEOPLE, len(others))
    constraints: list[list[Any]] = [[start, "9:00AM"]]
    for name, place in zip(people, others):
        opens = rng.randrange(9 * 60, 19 * 60, 15)
        closes = min(opens + rng.randrange(60, 6 * 60, 15), 22 * 60)
        constraints.append([name, place, f"{_clock(opens)} to {_clock(closes)}", rng.choice((15, 30, 45, 60, 90))])
    distances = "".join(f"{a} to {b}: {m}.\n" for a, row in matrix.items() for b, m in row.items())
    wants = " ".join(f"{name} will be at {place} from {window}. You'd like to meet {name} for "
                     f"a minimum of {minutes} minutes." for name, place, window, minutes in constraints[1:])
    prompt = (f"{MEETING_INTRO}Travel distances (in minutes):\n{distances}\nCONSTRAINTS: You arrive at {start} at "
              f"9:00AM. {wants}")
    return {"num_people": len(people), "constraints": constraints, "dist_matrix": matrix, "prompt_0shot": prompt,
            "golden_plan": best_meeting_plan(constraints, matrix)}


def best_meeting_plan(constraints: Sequence[Sequence[Any]], matrix: dict[str, dict[str, int]]) -> list[str]:
    """The plan meeting the most people (then finishing earliest), by trying every order, as official steps."""
    start, initial = constraints[0]
    best: tuple[int, int, list[str]] = (-1, 0, [])
    for size in range(len(constraints) - 1, -1, -1):
        for order in itertools.permutations(constraints[1:], size):
            plan = _meeting_steps(start, _minutes(initial), order, matrix)
            if plan is not None and (size, -plan[0]) > (best[0], -best[1]):
                best = (size, plan[0], plan[1])
        if best[0] == size:
            break
    return [f"You start at {start} at {initial}.", *best[2]]


def _meeting_steps(place: str, now: int, order: Sequence[Sequence[Any]],
                   matrix: dict[str, dict[str, int]]) -> tuple[int, list[str]] | None:
    steps: list[str] = []
    for name, where, window, minutes in order:
        opens, closes = (_minutes(part.strip()) for part in window.split("to"))
        if where != place:
            now += matrix[place][where]
            steps.append(f"You travel to {where} in {matrix[place][where]} minutes and arrive at {_clock(now)}.")
            place = where
        if now < opens:
            now = opens
            steps.append(f"You wait until {_clock(now)}.")
        if now + minutes > closes:
            return None
        steps.append(f"You meet {name} for {minutes} minutes from {_clock(now)} to {_clock(now + minutes)}.")
        now += minutes
    return now, steps


def _clock(minutes: int) -> str:
    return (datetime.datetime(1900, 1, 1) + datetime.timedelta(minutes=minutes)).strftime("%I:%M%p").lstrip("0")


def _minutes(text: str) -> int:
    moment = datetime.datetime.strptime(text, "%I:%M%p")
    return moment.hour * 60 + moment.minute
