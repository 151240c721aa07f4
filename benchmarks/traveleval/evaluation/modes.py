"""The evaluator's two modes.

- `official` (the default): the numbers the official evaluator (onlycwy11/TravelEval @ 3638d555, `core/`) gives,
  quirks included; every quirk is described where it is reproduced.
- `corrected`: the same metrics with the quirks fixed; each fix has a name (`FIXES`), listed in the README.
- `no-queue`: `official` with the queuing model switched off (the paper's ablation, Table B3): a visit's effective
  time is its whole duration, so the time dimension and `travel_time_satisfaction` change (official `aqe` deducts
  no wait anyway); every other metric is official.
"""

from __future__ import annotations

from collections.abc import Mapping

OFFICIAL, CORRECTED, NO_QUEUE = "official", "corrected", "no-queue"
MODES = (OFFICIAL, CORRECTED, NO_QUEUE)

FIXES: Mapping[str, str] = {
    "sandbox-from-query": "the sandbox city and the intercity options come from the query (target_city, "
                          "start_city), not from the plan's own summary",
    "budget-from-query": "budget_satisfaction compares the recomputed cost with the query's budget, not with the "
                         "plan's own summary.total_budget (the plan must still claim is_within_budget)",
    "transport-every-leg": "transportation_satisfaction checks the excluded types on every leg, not only the last",
    "diet-exclusions-always": "diet_preference_satisfaction checks the excluded cuisines on every meal, also while "
                              "preferences are pending, and a meal at an unknown restaurant has no cuisine (it does "
                              "not inherit the previous meal's)",
    "people-tickets-separate": "people_deviation averages the ticket deviations alone, without the room capacity "
                               "the official code leaves in the same running total",
    "aqe-queue-time": "aqe deducts the queue time of the attraction's categories (the official code iterates over "
                      "the letters of the word 'attraction', so it deducts nothing)",
    "missing-star-default": "an attraction without a star counts as 3.0 stars (the official default), not NaN",
    "transfer-breaks-checked": "transportation_breaks looks at consecutive activities' places and asks the distance "
                               "source for a public-transport route (the official code never sees a place name, "
                               "so it is always 0)",
    "spatial-offline": "RP and CSM use the configured distance source (offline: haversine x detour factor) instead "
                       "of returning 0 and {} when a distance is neither cached nor reachable",
}
"""Each fix of `corrected` mode, by name."""


def check_mode(mode: str) -> str:
    """`mode`, if it is one of `MODES`.

    Raises:
        ValueError: another value.
    """
    if mode not in MODES:
        raise ValueError(f"unknown TravelEval evaluation mode {mode!r} (expected one of {', '.join(MODES)})")
    return mode
