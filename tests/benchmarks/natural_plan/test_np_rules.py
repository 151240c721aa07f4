"""The official scoring rules, quirks included (docs/fidelity/natural_plan.md), on cases built to hit each one."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.natural_plan.evaluation import calendar, meeting, trip
from benchmarks.natural_plan.offline.world import trip_plan_text

TRIP: dict[str, Any] = {"task": "trip", "cities": "Porto**Venice**Oslo", "durations": "3**2**4", "num_cities": "3"}
GOLD_STAYS = [("Porto", 3), ("Venice", 2), ("Oslo", 4)]


def test_trip_reads_spans_and_flights_and_counts_the_flight_day_twice() -> None:
    answer = trip_plan_text(GOLD_STAYS)
    assert "European cities for 7 days" in answer
    assert trip.parse(answer) == GOLD_STAYS
    assert trip.score(TRIP, answer).solved


def test_trip_stops_at_the_span_ending_on_the_last_day() -> None:
    # an alternative plan after the first: only read because nothing says the trip's length
    alternative = ("\n\nAlternatively:\n**Day 1-3:** Visit Oslo.\n**Day 3:** Fly from Oslo to Porto.\n"
                   "**Day 3-7:** Porto.")
    with_length = trip_plan_text(GOLD_STAYS) + alternative
    assert trip.score(TRIP, with_length).solved
    without_length = with_length.replace("European cities for 7 days", "cities")
    parsed = trip.parse(without_length)
    assert len(parsed) == 4 and parsed[-1] == ("Porto", 5)  # the last span read ends on day 7
    assert not trip.score(TRIP, without_length).solved


def test_trip_extra_trailing_stays_still_pass_and_fewer_fail() -> None:
    longer = trip_plan_text([*GOLD_STAYS, ("Riga", 2)])
    verdict = trip.score(TRIP, longer)
    assert verdict.solved and "1 extra trailing stays" in verdict.reason
    shorter = trip.score(TRIP, trip_plan_text(GOLD_STAYS[:2]))
    assert not shorter.solved and shorter.error == "missing stays"


def test_trip_city_names_are_one_word_and_compared_exactly() -> None:
    record = {**TRIP, "cities": "Porto**Santo Domingo**Oslo"}
    answer = trip_plan_text([("Porto", 3), ("Santo Domingo", 2), ("Oslo", 4)])
    verdict = trip.score(record, answer)
    assert not verdict.solved and verdict.reason == "stay 2: Santo where the plan needs Santo Domingo"
    lower = trip.score(TRIP, trip_plan_text(GOLD_STAYS).replace("Venice", "venice"))
    assert not lower.solved and lower.error == "wrong order"


def test_trip_mistakes_are_named_by_the_first_difference() -> None:
    swapped = trip.score(TRIP, trip_plan_text([("Venice", 3), ("Porto", 2), ("Oslo", 4)]))
    assert (swapped.error, swapped.reason) == ("wrong order", "stay 1: Venice where the plan needs Porto")
    longer = trip.score(TRIP, trip_plan_text([("Porto", 4), ("Venice", 1), ("Oslo", 4)]))
    assert (longer.error, longer.reason) == ("wrong durations", "stay 1: 4 days in Porto where the plan needs 3")
    for prose in ("", "I would visit Porto, then Venice, then Oslo.", "**Day 1-3:** Porto"):
        verdict = trip.score(TRIP, prose)
        assert (verdict.solved, verdict.error, verdict.parsed) == (False, "unparseable answer", [])


CALENDAR = {"task": "calendar", "golden_plan": "Here is the proposed time: Monday, 14:30 - 15:30 ",
            "num_people": "2", "num_days": "1"}


@pytest.mark.parametrize(("answer", "solved", "error"), [
    ("Here is the proposed time: Monday, 14:30 - 15:30", True, None),
    ("Monday, 14:30 - 15:30 works, or Tuesday, 9:00 - 10:00", True, None),  # the first slot only
    ("Tuesday, 9:00 - 10:00 or Monday, 14:30 - 15:30", False, "wrong day"),
    ("Monday, 14:45 - 15:30", False, "wrong time"),  # :45 reads as :00
    ("monday, 14:30 - 15:30", False, "wrong day"),  # the day is compared case-sensitively
    ("Monday, 14:30-15:30", False, "unparseable answer"),  # spaces around the hyphen are required
    ("Monday 14:30 - 15:30", False, "unparseable answer"),  # so is the comma
])
def test_calendar_reads_the_first_slot_exactly(answer: str, solved: bool, error: str | None) -> None:
    verdict = calendar.score(CALENDAR, answer)
    assert (verdict.solved, verdict.error) == (solved, error)


def test_calendar_counts_only_half_past_as_a_half_hour() -> None:
    assert calendar.hour_to_num("9:30") == 9.5
    assert calendar.hour_to_num("9:15") == calendar.hour_to_num("9:00") == calendar.hour_to_num("9:45") == 9.0
    quirk = {**CALENDAR, "golden_plan": "Here is the proposed time: Friday, 9:00 - 9:30"}
    assert calendar.score(quirk, "Friday, 9:15 - 9:30").solved  # 9:15 equals 9:00 in the official rule


MEETING: dict[str, Any] = {
    "task": "meeting", "num_people": 2,
    "constraints": [["Presidio", "9:00AM"], ["Anna", "Nob Hill", "10:00AM to 12:00PM", 60],
                    ["Ben", "Chinatown", "1:00PM to 3:00PM", 30]],
    "dist_matrix": {"Presidio": {"Nob Hill": 20, "Chinatown": 25}, "Nob Hill": {"Presidio": 20, "Chinatown": 10},
                    "Chinatown": {"Presidio": 25, "Nob Hill": 10}},
    "golden_plan": ["You start at Presidio at 9:00AM.", "You travel to Nob Hill in 20 minutes and arrive at 9:20AM.",
                    "You wait until 10:00AM.", "You meet Anna for 60 minutes from 10:00AM to 11:00AM.",
                    "You travel to Chinatown in 10 minutes and arrive at 11:10AM.", "You wait until 1:00PM.",
                    "You meet Ben for 30 minutes from 1:00PM to 1:30PM."],
}
GOLD = "SOLUTION: " + " ".join(MEETING["golden_plan"])


def test_meeting_simulates_the_plan_and_compares_the_count_of_meetings() -> None:
    assert meeting.score(MEETING, GOLD).solved
    # Stated minutes and arrival times are ignored: the matrix decides; text before SOLUTION: is dropped
    lying = "Let me think. Anna first. " + GOLD.replace("in 20 minutes and arrive at 9:20AM", "in 1 minutes")
    assert meeting.score(MEETING, lying).solved
    # Another plan with as many meetings is solved too: only the count matters
    other = ("SOLUTION: You start at Presidio at 9:00AM. You travel to Nob Hill in 20 minutes. You wait until "
             "10:30AM. You meet Anna for 60 minutes. You travel to Chinatown in 10 minutes. You wait until 2:00PM. "
             "You meet Ben for 30 minutes.")
    assert meeting.score(MEETING, other).solved


@pytest.mark.parametrize(("change", "error", "meetings"), [
    (("You wait until 1:00PM.", "You wait until 11:00AM."), "invalid meeting step: wait goes backward", 1),
    (("You meet Ben for", "You meet Anna for"), "invalid meeting step: meets someone twice", 1),
    (("You travel to Chinatown in 10 minutes and arrive at 11:10AM.", ""), "invalid meeting step: wrong place", 1),
    (("You wait until 10:00AM. ", ""), "invalid meeting step: outside the window", 0),
    (("You wait until 1:00PM.", "Then you wait until 1:00PM."), "invalid meeting step: unknown step", 1),
    (("You wait until 1:00PM.", "You wait until 1 PM."), "invalid meeting step: unreadable time", 1),
    (("You travel to Chinatown", "You travel to Alcatraz"), "official script crash: unknown place", 1),
    (("You meet Ben for", "You meet Carol for"), "official script crash: unknown person", 1),
    (("You travel to Chinatown in", "You travel by cable car in"), "official script crash: malformed step", 1),
])
def test_meeting_stops_at_the_first_bad_step_keeping_the_meetings_before(change: tuple[str, str], error: str,
                                                                         meetings: int) -> None:
    verdict = meeting.score(MEETING, GOLD.replace(*change))
    assert (verdict.solved, verdict.error, verdict.score) == (False, error, meetings)
    assert f"{meetings} valid meeting(s), the gold plan has 2; stopped at step" in verdict.reason


def test_meeting_splits_on_every_period() -> None:
    # "St." ends a step: its remainder is an unknown step (the official split on ".")
    record = {**MEETING, "constraints": [["Presidio", "9:00AM"], ["Anna", "St. Mary", "10:00AM to 12:00PM", 60]],
              "dist_matrix": {"Presidio": {"St. Mary": 5}, "St. Mary": {"Presidio": 5}},
              "golden_plan": ["You start at Presidio at 9:00AM."]}
    verdict = meeting.score(record, "SOLUTION: You start at Presidio at 9:00AM. You travel to St. Mary in 5 minutes.")
    assert verdict.parsed[1:] == ["You travel to St", "Mary in 5 minutes"]
    # 0 meetings as in the gold plan, but the official script would die here: a failure, with the reason
    assert (verdict.solved, verdict.error) == (False, "official script crash: unknown place")
    assert "no distance from Presidio to 'St' (the official script would crash)" in verdict.reason
    assert meeting.steps_of("SOLUTION: a. b.. c") == ["a", "b", "c"]


def test_meeting_with_fewer_or_more_meetings_than_the_gold_fails() -> None:
    fewer = meeting.score(MEETING, GOLD.split(" You travel to Chinatown")[0])
    assert (fewer.solved, fewer.error, fewer.score) == (False, "fewer meetings", 1)
    easy_gold = {**MEETING, "golden_plan": MEETING["golden_plan"][:4]}  # a gold plan meeting only Anna
    more = meeting.score(easy_gold, GOLD)
    assert (more.solved, more.error, more.score) == (False, "more meetings", 2)
    assert meeting.score(MEETING, "SOLUTION:").error == "unparseable answer"
