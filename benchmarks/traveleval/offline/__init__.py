"""TravelEval offline: the oracle and noisy models (`models`), their plans (`plan_builder`, `mistakes`), the
generated world and the demo's run."""
