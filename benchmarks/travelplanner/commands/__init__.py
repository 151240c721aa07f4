"""TravelPlanner's own commands: evaluate and check-submission, tool, data fetch / import / info."""
