"""The TravelEval paper's names for the official metrics: one row per metric, its acronym beside the key the official
evaluator writes (`detailed_metrics[dimension][key]`), so report headers, the README table and the official-format CSV
speak of the same thing.

The acronyms are the paper's where it gives one (FAR, VROH, PD, BCS, FRTC, ATR, DTU, OTU, RP, CSM, BE, AQE, EDI, ADS);
the others follow its pattern. `lower_better` says which way a metric improves (the accuracy rates, RP and CSM are
errors; everything else is a quality).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BY_KEY", "DIMENSION_NAMES", "METRICS", "MetricName", "acronym"]

DIMENSION_NAMES = {"accuracy": "Accuracy", "constraint": "Compliance", "time": "Temporality", "space": "Spatiality",
                   "economy": "Economy", "utility": "Utility"}
"""The paper's name of each dimension (the official results call them by the keys)."""


@dataclass(frozen=True, slots=True)
class MetricName:
    dimension: str
    """The official dimension key (`accuracy`, `constraint`, `time`, `space`, `economy`, `utility`)."""
    key: str
    """The official metric key; CSM's percentiles as `CSM.P90` and `CSM.P95`."""
    acronym: str
    name: str
    """What it measures, in a few words."""
    lower_better: bool = False
    binary: bool = False
    """A 0/1 metric (the compliance dimension): its mean is a rate."""

    @property
    def official(self) -> str:
        """The column of the official evaluator's Excel row: `detailed_metrics_<dimension>_<key>`."""
        return f"detailed_metrics_{self.dimension}_{self.key.replace('.', '_')}"


METRICS: tuple[MetricName, ...] = (
    MetricName("accuracy", "cost_deviation_rate", "CDR", "cost deviation rate", lower_better=True),
    MetricName("accuracy", "fictitious_attraction_rate", "FAR", "fictitious attraction rate", lower_better=True),
    MetricName("accuracy", "opening_hours_violations", "VROH", "visits outside opening hours (rate)",
               lower_better=True),
    MetricName("accuracy", "transportation_breaks", "FRTC", "failed transfers between consecutive places (rate)",
               lower_better=True),
    MetricName("accuracy", "intercity_planning_deviation", "IPD", "intercity duration deviation", lower_better=True),
    MetricName("accuracy", "people_deviation", "PD", "people deviation (tickets, rooms, seats)", lower_better=True),
    MetricName("constraint", "budget_satisfaction", "BCS", "budget compliance", binary=True),
    MetricName("constraint", "time_compliance", "DC", "days compliance", binary=True),
    MetricName("constraint", "people_adaptability", "PA", "people adaptability", binary=True),
    MetricName("constraint", "accommodation_satisfaction", "HC", "hotel compliance (nights, feature)", binary=True),
    MetricName("constraint", "transportation_satisfaction", "TC", "intercity transport compliance", binary=True),
    MetricName("constraint", "diet_preference_satisfaction", "DPC", "diet preference compliance", binary=True),
    MetricName("constraint", "travel_time_satisfaction", "VTC", "visit time within the recommended range",
               binary=True),
    MetricName("time", "average_tour_ratio", "ATR", "average tour ratio"),
    MetricName("time", "daily_time_utilization", "DTU", "daily time utilization"),
    MetricName("time", "overall_time_utilization", "OTU", "overall time utilization"),
    MetricName("space", "RP", "RP", "route penalty (actual / shortest daily route - 1)", lower_better=True),
    MetricName("space", "CSM.P90", "CSM P90", "cross-day spatial misalignment, 90th percentile", lower_better=True),
    MetricName("space", "CSM.P95", "CSM P95", "cross-day spatial misalignment, 95th percentile", lower_better=True),
    MetricName("economy", "budget_efficiency", "BE", "budget efficiency (experience value per 1,000 RMB)"),
    MetricName("utility", "aqe", "AQE", "attraction quality efficiency"),
    MetricName("utility", "profit", "Profit", "experience value per attraction"),
    MetricName("utility", "diversity", "EDI", "experience diversity index"),
    MetricName("utility", "ads", "ADS", "attraction density (per day / the rhythm's target)"),
)
"""Every scalar metric, in the official order; the cost composition (`economy.cost_distribution`, the paper's CC) is
a breakdown, reported in its own table."""
BY_KEY = {(metric.dimension, metric.key): metric for metric in METRICS}


def acronym(dimension: str, key: str) -> str:
    """The paper's acronym of an official metric key (the key itself when it has none)."""
    found = BY_KEY.get((dimension, key))
    return found.acronym if found is not None else key
