"""The spend cap holds under concurrency: spent + reserved never passes it."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest
from gateway_doubles import ScriptedProvider

from providers.errors import BudgetExhausted
from providers.interface import ChatRequest, Message
from providers.prices import Price
from runner.budget import SpendCap
from runner.errors import ConfigError
from runner.gateway import Gateway
from runner.records import CallRecord

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


def test_settled_reservations_leave_exactly_nothing_reserved() -> None:
    # Float sums leave residue: a rollout waiting for "other calls' reservations" must read 0.0 once they are all
    # settled, or it waits forever (this hung the engine at the cap).
    amounts = [random.Random(1).random() * 0.01 for _ in range(50)]
    cap = SpendCap(100.0)
    reservations = [cap.reserve(amount) for amount in amounts]
    for reservation in reservations:
        cap.settle(reservation, 0.0)
    assert cap.reserved_usd == 0.0


def test_reserve_and_settle_from_many_threads() -> None:
    cap = SpendCap(10.0)
    refused = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal refused
        for _ in range(2000):
            try:
                reservation = cap.reserve(0.01)
            except BudgetExhausted:
                with lock:
                    refused += 1
                continue
            assert cap.spent_usd + cap.reserved_usd <= 10.0 + 1e-9
            cap.settle(reservation, 0.004)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cap.reserved_usd == pytest.approx(0.0) and cap.spent_usd <= 10.0
    assert refused > 0 and cap.spent_usd == pytest.approx((16000 - refused) * 0.004)


def test_the_error_says_why_and_a_reservation_settles_once() -> None:
    cap = SpendCap(1.0, spent_usd=0.9)  # a resumed run starts from what it spent before
    with pytest.raises(BudgetExhausted, match=r"spend cap \$1\.0000 reached: a call to x may cost up to \$0\.2000"):
        cap.reserve(0.2, what="a call to x")
    reservation = cap.reserve(0.1)
    cap.settle(reservation, 0.05)
    with pytest.raises(RuntimeError):
        cap.settle(reservation, 0.05)
    assert cap.spent_usd == pytest.approx(0.95) and cap.remaining_usd == pytest.approx(0.05)


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
