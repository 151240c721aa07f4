"""Fixtures for the call ladder's tests (the doubles themselves live in gateway_doubles.py)."""

from __future__ import annotations

import pytest

from runner.ladder.calls import CallRecord
from tests.runner.ladder.gateway_doubles import FakeClock, ScriptedProvider


@pytest.fixture
def scripted() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def records() -> list[CallRecord]:
    return []
