"""The spend cap holds under concurrency: spent + reserved never passes it."""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from errors import ConfigError
from providers.errors import BudgetExhausted, ServerError
from providers.interface import ChatRequest, Message
from providers.prices import Price, cost_at
from providers.tokens import count_prompt_tokens
from runner.ladder.budget import SpendCap
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import PROMPT_MARGIN, Gateway
from runner.ladder.retry import Retrier
from tests.runner.ladder.gateway_doubles import FakeClock, ScriptedProvider

PRICES = {"fake:m": Price(input=3.0, output=15.0)}


@pytest.mark.parametrize("input_scale", [1.0, 1.25], ids=["cl100k billing", "a tokenizer counting 25% more"])
async def test_hundreds_of_concurrent_calls_never_pass_the_cap(records: list[CallRecord], input_scale: float) -> None:
    cap = SpendCap(0.05)
    rng = random.Random(3)
    seen_over: list[float] = []

    def check(_: ChatRequest) -> None:  # runs inside every provider call, while others are in flight
        if cap.spent_usd + cap.reserved_usd > cap.cap_usd + 1e-12:  # type: ignore[operator]
            seen_over.append(cap.spent_usd + cap.reserved_usd)

    provider = ScriptedProvider(output_tokens=10_000, on_call=check)  # every call uses its whole max_tokens
    provider.input_scale = input_scale
    provider.latency_s = 0.02  # ~40 calls in flight at any time: reservations interleave with settlements
    gw = Gateway(resolve=lambda _: provider, spend_cap=cap, prices=PRICES, on_call=records.append)

    async def one(i: int) -> None:
        await asyncio.sleep(rng.random() / 5)
        # Prompts dominate the cost, so an input estimate that falls short would show.
        request = ChatRequest("fake:m", (Message("user", f"question {i} " * rng.randint(50, 400)),),
                              max_tokens=rng.choice([50, 100]))
        await gw.complete(request)

    results = await asyncio.gather(*(one(i) for i in range(400)), return_exceptions=True)
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert [r for r in results if r is not None and not isinstance(r, BudgetExhausted)] == []
    assert refused and len(provider.calls) == 400 - len(refused)  # a refused call is never sent
    assert seen_over == [] and cap.spent_usd <= 0.05 and cap.reserved_usd == pytest.approx(0.0)
    assert cap.spent_usd == pytest.approx(sum(r.cost_usd or 0.0 for r in records))
    assert cap.spent_usd > 0.05 * 0.8  # the cap is used, not merely respected by refusing everything


async def test_settled_reservations_leave_exactly_nothing_reserved() -> None:
    # Float sums leave residue: a call waiting for "other calls' reservations" must read 0.0 once they are all
    # settled, or it waits forever (this hung the engine at the cap).
    amounts = [random.Random(1).random() * 0.01 for _ in range(50)]
    cap = SpendCap(100.0)
    reservations = [await cap.reserve(amount) for amount in amounts]
    for reservation in reservations:
        cap.settle(reservation, 0.0)
    assert cap.reserved_usd == 0.0


async def test_a_reservation_waits_for_others_to_settle_and_is_refused_only_when_none_is_open() -> None:
    cap = SpendCap(1.0)
    first = await cap.reserve(0.6)
    second = asyncio.ensure_future(cap.reserve(0.6))  # does not fit while the first holds its worst case
    await asyncio.sleep(0.01)
    assert not second.done() and not cap.exhausted
    cap.settle(first, 0.3)  # most of a worst case comes back: now it fits
    held = await asyncio.wait_for(second, 1)
    assert cap.reserved_usd == pytest.approx(0.6) and cap.spent_usd == pytest.approx(0.3)
    third = asyncio.ensure_future(cap.reserve(0.6))
    await asyncio.sleep(0.01)
    cap.settle(held, 0.6)  # nothing comes back and nothing else is open: the cap itself is reached
    with pytest.raises(BudgetExhausted):
        await asyncio.wait_for(third, 1)
    assert cap.exhausted and cap.spent_usd == pytest.approx(0.9) and cap.reserved_usd == 0.0


async def test_the_error_says_why_and_a_reservation_settles_once() -> None:
    cap = SpendCap(1.0, spent_usd=0.9)  # a resumed run starts from what it spent before
    with pytest.raises(BudgetExhausted, match=r"spend cap \$1\.0000 reached: a call to x may cost up to \$0\.2000"):
        await cap.reserve(0.2, what="a call to x")
    reservation = await cap.reserve(0.1)
    cap.settle(reservation, 0.05)
    with pytest.raises(RuntimeError):
        cap.settle(reservation, 0.05)
    assert cap.spent_usd == pytest.approx(0.95) and cap.remaining_usd == pytest.approx(0.05)


async def test_each_attempt_is_charged_and_one_that_may_have_been_billed_at_its_worst_case(
        scripted: ScriptedProvider, records: list[CallRecord]) -> None:
    cap = SpendCap(10.0)
    gw = Gateway(resolve=lambda _: scripted, spend_cap=cap, prices=PRICES, on_call=records.append,
                 retrier=Retrier(sleep=FakeClock().sleep))
    text = "hello " * 100
    scripted.fail_next(ServerError("connection dropped"),  # no status: the server may have answered and billed
                       ServerError("HTTP 503", status=503))  # an error answer: nothing billed
    await gw.complete(ChatRequest("fake:m", (Message("user", text),), max_tokens=1000))
    worst = (math.ceil(count_prompt_tokens([("user", text)]) * PROMPT_MARGIN) * 3.0 + 1000 * 15.0) / 1e6
    (record,) = records
    assert record.retries == 2 and record.cost_usd == pytest.approx(cost_at(record.usage, PRICES["fake:m"]))
    assert cap.spent_usd == pytest.approx(worst + record.cost_usd) and cap.reserved_usd == 0.0


async def test_a_run_without_a_cap_still_sums_costs(scripted: ScriptedProvider) -> None:
    gw = Gateway(resolve=lambda _: scripted, prices=PRICES)
    for i in range(3):
        await gw.complete(ChatRequest("fake:m", (Message("user", f"q{i}"),)))
    assert gw.spend_cap.cap_usd is None and gw.spend_cap.spent_usd > 0 and gw.spend_cap.remaining_usd is None


async def test_a_cap_with_an_unpriced_model_is_a_config_error(scripted: ScriptedProvider) -> None:
    gw = Gateway(resolve=lambda _: scripted, spend_cap=SpendCap(1.0))
    with pytest.raises(ConfigError, match="fake:m"):
        await gw.complete(ChatRequest("fake:m", (Message("user", "hi"),)))
    assert scripted.calls == []
