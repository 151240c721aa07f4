"""Fixtures of the evaluator tests: the docs/fidelity/travelplanner.md §11 query and plan, both evaluators (the
staged train queries: tests/benchmarks/travelplanner/conftest.py)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from benchmarks.travelplanner.dataset import LocalConstraint, Query
from benchmarks.travelplanner.evaluation import OfficialEvaluator, StrictEvaluator


@pytest.fixture(scope="session")
def official(sandbox: Any) -> OfficialEvaluator:
    return OfficialEvaluator(sandbox)


@pytest.fixture(scope="session")
def strict(sandbox: Any) -> StrictEvaluator:
    return StrictEvaluator(sandbox)


@pytest.fixture(params=["official", "strict"])
def evaluator(request: pytest.FixtureRequest, official: OfficialEvaluator,
              strict: StrictEvaluator) -> OfficialEvaluator:
    return official if request.param == "official" else strict


@pytest.fixture(scope="session")
def rockford_query(train_queries: list[Query]) -> Query:
    """Spec §11: St. Petersburg -> Rockford, 3 days, budget 1700, one traveller, no local constraint."""
    query = train_queries[0]
    assert (query.org, query.dest, query.days, query.budget, query.people_number) == (
        "St. Petersburg", "Rockford", 3, 1700, 1)
    return query


@pytest.fixture(scope="session")
def hard_rockford_query(rockford_query: Query) -> Query:
    """Spec §11: the same trip for 6 with house rule smoking, cuisine French+Seafood, entire room, no flight."""
    return dataclasses.replace(rockford_query, people_number=6, level="hard", local_constraint=LocalConstraint(
        house_rule="smoking", cuisine=("French", "Seafood"), room_type="entire room", transportation="no flight"))


@pytest.fixture
def rockford_plan(rockford_query: Query) -> list[Any]:
    """A fresh copy of the reference plan (3 days followed by four `{}` entries), safe to mutate."""
    plan = copy.deepcopy(rockford_query.annotated_plan)
    assert plan is not None and len(plan) == 7 and plan[3:] == [{}, {}, {}, {}]
    return plan
