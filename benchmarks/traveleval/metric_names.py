"""The TravelEval paper's names for the official metrics: one row per metric, its acronym beside the key the official
evaluator writes (`detailed_metrics[dimension][key]`), so report headers, the README table and the official-format CSV
speak of the same thing.

The acronyms and names are the paper's (its Section 3 and Appendix A; its Table B rows); Profit has no acronym in
the paper and keeps its name. The cost composition's categories have theirs too (`COST_NAMES`: ACD, ATD, ETD, RTD,
MED, OTD). `lower_better` says which way a metric improves (the accuracy rates, SSR and CSM are errors; everything
else is a quality).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BY_KEY", "COST_NAMES", "DIMENSION_NAMES", "METRICS", "MetricName", "acronym"]

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
    MetricName("accuracy", "cost_deviation_rate", "CCD", "cost calculation deviation", lower_better=True),
    MetricName("accuracy", "fictitious_attraction_rate", "FAR", "fictitious attraction rate", lower_better=True),
    MetricName("accuracy", "opening_hours_violations", "VROH", "violation rate of opening hours",
               lower_better=True),
    MetricName("accuracy", "transportation_breaks", "FRTC", "failure rate of traffic connection",
               lower_better=True),
    MetricName("accuracy", "intercity_planning_deviation", "ITD", "intercity traffic deviation", lower_better=True),
    MetricName("accuracy", "people_deviation", "PD", "personnel deviation (tickets, rooms, seats)", lower_better=True),
    MetricName("constraint", "budget_satisfaction", "BCS", "budget compliance sign", binary=True),
    MetricName("constraint", "time_compliance", "TCS", "time compliance sign (days)", binary=True),
    MetricName("constraint", "people_adaptability", "HCS", "headcount compliance sign", binary=True),
    MetricName("constraint", "accommodation_satisfaction", "PAS-A", "preference achievement: accommodation",
               binary=True),
    MetricName("constraint", "transportation_satisfaction", "PAS-T", "preference achievement: transport",
               binary=True),
    MetricName("constraint", "diet_preference_satisfaction", "PAS-C", "preference achievement: cuisine", binary=True),
    MetricName("constraint", "travel_time_satisfaction", "TTCS", "tour-time compliance sign",
               binary=True),
    MetricName("time", "average_tour_ratio", "STR", "scene-time ratio"),
    MetricName("time", "daily_time_utilization", "DTU", "daily time utilization"),
    MetricName("time", "overall_time_utilization", "OTU", "overall time utilization"),
    MetricName("space", "RP", "SSR", "scene sequence rationality (route penalty)", lower_better=True),
    MetricName("space", "CSM.P90", "CSM P90", "cross-day spatial mismatch, 90th percentile", lower_better=True),
    MetricName("space", "CSM.P95", "CSM P95", "cross-day spatial mismatch, 95th percentile", lower_better=True),
    MetricName("economy", "budget_efficiency", "BE", "budget efficiency (experience value per 1,000 RMB)"),
    MetricName("utility", "aqe", "AQE", "attraction quality efficiency"),
    MetricName("utility", "profit", "Profit", "experience value per attraction"),
    MetricName("utility", "diversity", "EDI", "experience diversity index"),
    MetricName("utility", "ads", "ADS", "attraction density (per day / the rhythm's target)"),
)
"""Every scalar metric, in the official order; the cost composition (`economy.cost_distribution`, the paper's CC) is
a breakdown, reported in its own table."""
BY_KEY = {(metric.dimension, metric.key): metric for metric in METRICS}
COST_NAMES = {"accommodation": "ACD", "attractions": "ATD", "intercity_transportation": "ETD",
              "intracity_transportation": "RTD", "meals": "MED", "other": "OTD"}
"""The paper's acronym of each category of the cost composition (`economy.cost_distribution`'s keys)."""


def acronym(dimension: str, key: str) -> str:
    """The paper's acronym of an official metric key (the key itself when it has none)."""
    found = BY_KEY.get((dimension, key))
    return found.acronym if found is not None else key
