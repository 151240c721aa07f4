"""TravelEval's strategies. The paper's (`paper.py`, the default protocol): `direct`, `cot` and `react` (one call
each) and `reflexion` (the react call, then a critique that writes the plan again). Beyond the paper (`react.py`):
`react-tools` and `reflexion-tools`, agents over the sandbox tools. Each answers with the official
`FinalTravelPlan` JSON."""
