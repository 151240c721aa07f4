"""Two runs (or two groups of one run) compared pair by pair: `tripbench compare RUN_A RUN_B`.

    found = compare(pairings("runs/before", "runs/after"))      # rollouts matched by (split, task, sample)
    files = write_comparison(found, title, method_notes(found), all_tables(found), out)

`pairing` matches the rollouts, `metrics` reads each rollout's values (its benchmark's, then cost and tokens),
`stats` holds the tests and intervals, `divergence` where two rollouts' calls part, `analysis` puts them together,
`tables`, `html` and `write` show them.
"""
