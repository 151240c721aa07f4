"""TravelPlanner offline: the oracle and noisy models (`models`), the oracle's reading of notebooks and its plan
search, the generated demo world, and the demo's runs."""
