"""What tests need from outside the project (the staged data in ../shared/data, a browser): skipped when absent,
with one summary line each at the end of the run (the root conftest), or failed when `TRIPBENCH_REQUIRE_DATA=1`
(`.ci/run` sets it, so CI never passes by skipping)."""

from __future__ import annotations

import os

import pytest

MISSING = " not found: "
"""In the reason of every such skip: how the summary finds them."""


def require(what: str, how: str) -> None:
    """Skips the calling test for lack of `what`, or fails it when `TRIPBENCH_REQUIRE_DATA=1`.

    Args:
        what: What is missing, e.g. "the staged data at ../shared/data/travelplanner".
        how: How to get it.
    """
    message = f"{what}{MISSING}{how}"
    if os.environ.get("TRIPBENCH_REQUIRE_DATA") == "1":
        pytest.fail(message)
    pytest.skip(message)
