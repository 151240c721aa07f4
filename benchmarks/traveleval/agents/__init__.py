"""TravelEval's strategies: `direct` and `cot` (one call), `react` (tool use) and `reflexion` (ReAct that reflects
on a failed attempt and tries again). Each answers with the official `FinalTravelPlan` JSON."""
