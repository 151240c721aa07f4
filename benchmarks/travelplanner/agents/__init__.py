"""TravelPlanner strategies: the two-stage ReAct agent, the sole-planning planners and the greedy baseline."""
