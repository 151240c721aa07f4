"""The generic engine, in rooms: `ladder/` (one LLM call: gateway, retry, rate limits, budget, batches), `store/`
(a run directory: results store, migrations, readers, outputs, summary), `engine/` (running a run: spec, expansion,
scheduler, rollout, execution, dry run, progress) and `cli/` on top; `outcomes.py` is the failure policy all share."""
