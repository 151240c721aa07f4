"""Natural Plan's own commands: evaluate, data fetch / import / info."""
