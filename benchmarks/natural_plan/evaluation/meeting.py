"""Meeting Planning: the official simulation of the plan, solved when it makes as many valid meetings as the gold.

The answer is cut after its first `SOLUTION:` and split on `.` into steps (spec, Meeting Planning). Each step is
simulated from the start place and time: `You start` is skipped; `You travel to X in` moves to X and advances the
clock by the distance matrix (the minutes the model states are ignored); `You wait until T` must move the clock
forward; `You meet P for` is valid only at P's place, within P's window and for P's minutes (from the
constraints, not the text), once per person. Any other step is an error. The first error ends the simulation,
keeping the meetings counted so far. The gold plan (a list of steps) is simulated the same way.

Where the official script would die (an unknown place or person, a step without the text it splits on), the
simulation stops the same way and the reason says so: the answer is not solved, the run goes on.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.natural_plan.evaluation.scored import UNPARSEABLE, Scored

_PREFIX = "SOLUTION:"
CRASH = "official script crash"
"""The error kinds of steps the official script would die on (recorded as failures here)."""


@dataclass(frozen=True, slots=True)
class Person:
    location: str
    start: datetime.datetime
    end: datetime.datetime
    minutes: int


@dataclass(frozen=True, slots=True)
class Simulation:
    meetings: int
    """Valid meetings before the first error."""
    failed_step: int | None = None
    """1-based index of the step that stopped the simulation (None: every step ran)."""
    reason: str | None = None
    kind: str | None = None
    """`invalid meeting step: ...`, or `official script crash: ...` where the official script would die."""


class _StepError(Exception):
    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


def clock(text: str) -> datetime.datetime:
    """`9:00AM` as the official script reads it (`%I:%M%p`)."""
    return datetime.datetime.strptime(text, "%I:%M%p")


def steps_of(answer: str) -> list[str]:
    """The answer's steps: after the first `SOLUTION:`, split on every `.`, stripped, empty pieces dropped."""
    if _PREFIX in answer:
        answer = answer[answer.find(_PREFIX) + len(_PREFIX):]
    return [piece.strip() for piece in answer.split(".") if piece.strip()]


def people(record: Mapping[str, Any]) -> dict[str, Person]:
    """The record's constraints after the first (the start): name -> place, window and minutes."""
    found: dict[str, Person] = {}
    for name, location, window, minutes in record["constraints"][1:]:
        start, end = str(window).split("to")[0].strip(), str(window).split("to")[1].strip()
        found[name] = Person(location, clock(start), clock(end), int(minutes))
    return found


def simulate(steps: Sequence[str], record: Mapping[str, Any]) -> Simulation:
    """Runs `steps` from the record's start place and time; see the module docstring."""
    start_location, start_time = record["constraints"][0]
    distances: Mapping[str, Mapping[str, int]] = record["dist_matrix"]
    known = people(record)
    met: set[str] = set()
    location, now = start_location, clock(start_time)
    meetings = 0
    for number, step in enumerate(steps, start=1):
        try:
            location, now, valid = _step(step, location, now, distances, known, met)
        except _StepError as error:
            return Simulation(meetings, number, f"step {number} ({step!r}): {error}", error.kind)
        meetings += valid
    return Simulation(meetings)


def _step(step: str, location: str, now: datetime.datetime, distances: Mapping[str, Mapping[str, int]],
          known: Mapping[str, Person], met: set[str]) -> tuple[str, datetime.datetime, int]:
    """One step: the new place and clock, and 1 for a valid meeting."""
    if step.startswith("You start"):
        return location, now, 0
    if step.startswith("You travel"):
        destination = _between(step, "travel to ", " in").strip()
        minutes = distances.get(location, {}).get(destination)
        if minutes is None:
            raise _StepError(f"{CRASH}: unknown place",
                             f"no distance from {location} to {destination!r} (the official script would crash)")
        return destination, now + datetime.timedelta(minutes=minutes), 0
    if step.startswith("You wait"):
        text = _between(step, "wait until ", ".").strip()
        try:
            until = clock(text)
        except ValueError:
            raise _StepError("invalid meeting step: unreadable time", f"{text!r} is not a time like 9:00AM") from None
        if until <= now:
            raise _StepError("invalid meeting step: wait goes backward",
                             f"waits until {text} at {_show(now)} (cannot go backward in time)")
        return location, until, 0
    if step.startswith("You meet"):
        name = _between(step, "meet ", " for").strip()
        if name in met:
            raise _StepError("invalid meeting step: meets someone twice", f"{name} already met")
        met.add(name)
        person = known.get(name)
        if person is None:
            raise _StepError(f"{CRASH}: unknown person",
                             f"nobody called {name!r} (the official script would crash)")
        done = now + datetime.timedelta(minutes=person.minutes)
        if location != person.location:
            raise _StepError("invalid meeting step: wrong place", f"{name} is at {person.location}, not {location}")
        if now < person.start or done > person.end:
            raise _StepError("invalid meeting step: outside the window",
                             f"{person.minutes} min with {name} from {_show(now)} leaves their window "
                             f"{_show(person.start)}-{_show(person.end)}")
        return location, done, 1
    raise _StepError("invalid meeting step: unknown step", "not a start, travel, wait or meet step")


def _between(step: str, before: str, after: str) -> str:
    """`step.split(before)[1].split(after)[0]`, where a missing `before` is the official script's crash."""
    pieces = step.split(before)
    if len(pieces) < 2:
        raise _StepError(f"{CRASH}: malformed step",
                         f"no {before.strip()!r} in the step (the official script would crash)")
    return pieces[1].split(after)[0]


def _show(moment: datetime.datetime) -> str:
    return moment.strftime("%I:%M%p").lstrip("0")


def score(record: Mapping[str, Any], answer: str) -> Scored:
    """The official verdict: solved when the answer's valid meetings equal the gold plan's."""
    steps = steps_of(answer)
    gold = simulate(record["golden_plan"], record).meetings
    if not steps:
        return Scored(False, 0.0, steps, "no steps in the answer", UNPARSEABLE)
    run = simulate(steps, record)
    crashed = run.kind is not None and run.kind.startswith(CRASH)
    solved = run.meetings == gold and not crashed  # the official script gives no number where it dies
    counted = f"{run.meetings} valid meeting(s), the gold plan has {gold}"
    if run.reason is not None:
        reason = f"{counted}; stopped at {run.reason}"
    else:
        reason = counted
    error = None if solved else run.kind or ("fewer meetings" if run.meetings < gold else "more meetings")
    return Scored(solved, float(run.meetings), steps, reason, error)
