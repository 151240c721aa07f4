"""The official prompt-length checks: skipping the count of a text no longer in bytes than the limit never changes
a decision, since a cl100k token stands for one byte or more."""

from __future__ import annotations

import random

from benchmarks.travelplanner.agents.planner_tool import count_tokens, over_token_limit


def test_the_byte_bound_never_changes_a_decision() -> None:
    rng = random.Random(7)
    alphabet = ["a", "e", " ", "\n", "Rome", "1,234", "é", "東京", "🙂", "\ud800", "<|endoftext|>"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        tokens = count_tokens(text)
        for limit in {0, 1, tokens - 1, tokens, tokens + 1, len(text)}:
            if limit >= 0:
                assert over_token_limit(text, limit) == (tokens > limit), (text, limit)
