"""What the evaluator returns per plan: official constraint keys, their paper names, and `PlanVerdict`."""

from __future__ import annotations

from dataclasses import dataclass

Result = tuple[bool | None, str | None]
"""`(True, None)`, `(False, message)`, or `(None, None)` for a constraint the query does not request."""

# official key order (docs/fidelity/travelplanner.md §7.1)
COMMONSENSE_KEYS = (
    "is_reasonable_visiting_city", "is_valid_restaurants", "is_valid_attractions", "is_valid_accommodation",
    "is_valid_transportation", "is_valid_information_in_current_city", "is_valid_information_in_sandbox",
    "is_not_absent",
)
UNCHECKED = "Could not check: "
"""Prefix of the message of a constraint the plan's malformed input kept from being checked (`plan_days`)."""

HARD_KEYS = ("valid_cuisine", "valid_room_rule", "valid_transportation", "valid_room_type", "valid_cost")

PAPER_NAMES = {  # eval.py `paper_term_mapping`
    "is_valid_information_in_current_city": "Within Current City",
    "is_valid_information_in_sandbox": "Within Sandbox",
    "is_reasonable_visiting_city": "Reasonable City Route",
    "is_valid_restaurants": "Diverse Restaurants",
    "is_valid_transportation": "Non-conf. Transportation",
    "is_valid_attractions": "Diverse Attractions",
    "is_valid_accommodation": "Minimum Nights Stay",
    "is_not_absent": "Complete Information",
    "valid_cost": "Budget",
    "valid_room_rule": "Room Rule",
    "valid_cuisine": "Cuisine",
    "valid_room_type": "Room Type",
    "valid_transportation": "Transportation",
}


@dataclass(frozen=True, slots=True)
class PlanVerdict:
    """The verdict on one plan, boxed as the official driver boxes it (docs/fidelity/travelplanner.md §7.1)."""

    commonsense: dict[str, Result] | None
    """None when the plan was not delivered."""
    hard: dict[str, Result] | None
    """None unless Complete Information and Within Sandbox passed."""
    total_cost: int | float | None
    """The official total cost; computed only where the hard constraints are."""
    error: str | None = None
    """Why the submission line could not be read (bad JSON, no query for it), else None."""

    @property
    def delivered(self) -> bool:
        return self.commonsense is not None

    def to_json(self) -> dict[str, object]:
        """The `per_plan` entry of `tripbench evaluate --json`."""
        def box(results: dict[str, Result] | None) -> dict[str, list[object]] | None:
            return None if results is None else {key: list(value) for key, value in results.items()}
        return {"commonsense": box(self.commonsense), "hard": box(self.hard), "total_cost": self.total_cost,
                "error": self.error}
