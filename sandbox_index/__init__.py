"""Builds and queries SQLite indexes over benchmark databases (TravelPlanner: 3.8M flight rows)."""

from sandbox_index.build import BuildSummary, build_travelplanner_index
from sandbox_index.sandbox import DistanceRow, Frame, Sandbox, open_sandbox, travelplanner_index_path

__all__ = [
    "BuildSummary",
    "DistanceRow",
    "Frame",
    "Sandbox",
    "build_travelplanner_index",
    "open_sandbox",
    "travelplanner_index_path",
]
