"""Builds and queries SQLite indexes over benchmark databases (TravelPlanner: 3.8M flight rows)."""
