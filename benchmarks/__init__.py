"""One package per benchmark: datasets, prompts, agents and strategies, plan parsing, evaluators, metrics."""
