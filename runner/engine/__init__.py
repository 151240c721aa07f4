"""Running a run: the spec, its expansion into rollouts, the scheduler, one rollout, execution, dry run, progress."""
