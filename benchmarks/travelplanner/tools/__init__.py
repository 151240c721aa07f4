"""The TravelPlanner sandbox tools with the official observation texts (docs/fidelity/travelplanner.md §3, §4.4-§4.6):
the searches, the notebook, the two-stage agent's action handling, and the sole-planning agents' CostEnquiry."""

from __future__ import annotations

from benchmarks.travelplanner.tools.actions import (
    CITY_ERROR,
    COUNTERS,
    DATE_ERROR,
    EARLY_STOP_KEYS,
    INVALID_ACTION,
    INVALID_ACTION_STATE,
    OTHER_ERROR,
    SUCCESSFUL,
    ToolOutcome,
    execute_action,
    parse_action,
)
from benchmarks.travelplanner.tools.cost_enquiry import COST_UNAVAILABLE, MAX_FIELD_CHARS, cost_enquiry
from benchmarks.travelplanner.tools.notebook import Notebook
from benchmarks.travelplanner.tools.searches import (
    DistanceInfo,
    accommodation_search,
    attraction_search,
    city_search,
    data_text,
    distance_for_evaluation,
    distance_matrix,
    flight_search,
    restaurant_search,
)

__all__ = ["CITY_ERROR", "COST_UNAVAILABLE", "COUNTERS", "DATE_ERROR", "EARLY_STOP_KEYS", "INVALID_ACTION",
           "INVALID_ACTION_STATE", "MAX_FIELD_CHARS", "OTHER_ERROR", "SUCCESSFUL", "DistanceInfo", "Notebook",
           "ToolOutcome", "accommodation_search", "attraction_search", "city_search", "cost_enquiry", "data_text",
           "distance_for_evaluation", "distance_matrix", "execute_action", "flight_search", "parse_action",
           "restaurant_search"]
