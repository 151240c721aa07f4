"""Natural Plan offline: the oracle and noisy models (`models`), the generated world and the demo's run."""
