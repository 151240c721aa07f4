"""TravelEval (onlycwy11/TravelEval): Chinese travel-planning queries over a 10-city sandbox, scored on six
dimensions (accuracy, constraint, time, space, economy, utility) as the official evaluator computes them
(`docs/fidelity/traveleval.md`).
"""
