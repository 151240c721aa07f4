"""The generic engine: run specs, rollout expansion, scheduler, gateway, budgets, results store, CLI."""
