"""The run's spend cap, its one owner: spent + reserved never passes the cap, under concurrency and across crashes.

Before a provider call the gateway reserves the call's worst-case cost (estimated prompt tokens plus `max_tokens`,
at the price table); afterwards the reservation is settled with the actual cost and the unused part is released.
Reserve-then-settle is what makes the cap hold under concurrency: a check-then-spend budget (LiteLLM's) lets every
call in a burst see the same headroom.

A reservation that does not fit while other calls hold reservations waits for them to settle (they are worst cases,
most of their money comes back); it is refused with `BudgetExhausted` only when nothing else is reserved, that is
when the cap itself is reached. From then on `exhausted` is set and the engine starts no new rollout.

A `Ledger` may also decide (the team database's, `runner.team.budget`, holds one cap for every process sharing it):
its `open` then waits while other processes' reservations may free enough, and raises `BudgetExhausted` when the
shared cap is reached, which sets `exhausted` here as a refusal of this process's own would.

Write-ahead: with a `Ledger` (the results store's `charge` table, `runner/store/ledger.py`) every reservation is booked
durably before the call is sent and settled there with the real cost. A process killed in between leaves the charge
open, and an open charge counts as spent at its worst case until a later session settles it from the cache entry the
answer left: money a provider billed for calls in flight at a crash is never forgotten, so the cap holds for the
money billed across any number of crashes.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Protocol

from providers.errors import BudgetExhausted

IMPOSSIBLE_MULTIPLE = 10.0
"""A call whose reported usage costs more than this multiple of its worst case (prompt estimate with margin, the
output allowance) reports something impossible: it is charged at its worst case and flagged, like a call with no
usage. Generous, so that a long answer to a request without `max_tokens` is still believed."""


def impossible(cost_usd: float, worst_usd: float) -> bool:
    """Whether a reported cost is far beyond the call's worst case (see `IMPOSSIBLE_MULTIPLE`)."""
    return cost_usd > worst_usd * IMPOSSIBLE_MULTIPLE


def _booked(actual_usd: float, worst_usd: float) -> float:
    """A cost as the ledger books it: never below nothing, so a negative or NaN cost counts at its worst case."""
    return actual_usd if 0.0 <= actual_usd < math.inf else worst_usd


class Ledger(Protocol):
    """Where reservations are booked durably."""

    async def open(self, amount_usd: float, *, model: str, cache_key: str | None) -> int:
        """Books a reservation; returns once it is durable, with the charge's id."""

    def settle(self, charge: int, cost_usd: float) -> None:
        """Records what the call cost (idempotent; durable soon, not necessarily before returning)."""

    def unknown(self, charge: int) -> None:
        """The call may or may not have been billed (no answer seen): the charge stays open, counted as spent at its
        worst case until an answer under its cache key settles it (a ledger that counts open charges so does
        nothing)."""


@dataclass(slots=True)
class Reservation:
    """Money set aside for one call until it is settled."""

    amount_usd: float
    charge: int | None = None
    """The ledger's id of the booking (None without a ledger)."""
    settled: bool = False


class SpendCap:
    """Spent and reserved dollars against an optional cap, for the asyncio tasks of one event loop.

    Args:
        cap_usd: The most the run may spend; None for a run without a cap (costs are still summed and booked).
        spent_usd: What earlier sessions of a resumed run already spent (open charges of dead sessions included).
        ledger: Books each reservation durably before its call is sent; None keeps them in memory only.
    """

    def __init__(self, cap_usd: float | None = None, *, spent_usd: float = 0.0, ledger: Ledger | None = None) -> None:
        if cap_usd is not None and cap_usd < 0:
            raise ValueError(f"spend cap must be >= 0, got {cap_usd}")
        self.cap_usd = cap_usd
        self.exhausted = False
        """Set when a reservation was refused with nothing else reserved: the cap is reached."""
        self._spent = max(0.0, spent_usd)  # a ledger an older tripbench let go negative is no headroom
        self._reserved = 0.0
        self._open = 0  # unsettled reservations: at 0, `_reserved` is reset so float residue never reads as a hold
        self._ledger = ledger
        self._released = asyncio.Event()  # set (and replaced) by every settlement: waiting reservations look again

    @property
    def spent_usd(self) -> float:
        return self._spent

    @property
    def reserved_usd(self) -> float:
        """Money held by unsettled reservations; exactly 0.0 when none is open."""
        return self._reserved

    @property
    def remaining_usd(self) -> float | None:
        """Headroom for new reservations (None: no cap)."""
        return None if self.cap_usd is None else self.cap_usd - self._spent - self._reserved

    def _fits(self, amount_usd: float) -> bool:
        return self.cap_usd is None or self._spent + self._reserved + amount_usd <= self.cap_usd

    async def reserve(self, amount_usd: float, *, model: str = "", cache_key: str | None = None,
                      what: str = "the next call") -> Reservation:
        """Set `amount_usd` aside (booked in the ledger before returning), waiting while other reservations may free
        enough of the cap.

        Args:
            amount_usd: The call's worst-case cost.
            model: The call's model string, for the ledger.
            cache_key: The call's cache key, for the ledger (how a later session settles a charge left open).
            what: Names the call in the error message.

        Raises:
            BudgetExhausted: Spent + `amount_usd` passes the cap with nothing else reserved.
        """
        while not self._fits(amount_usd):
            if self._open == 0:
                self.exhausted = True
                assert self.cap_usd is not None
                raise BudgetExhausted(f"spend cap ${self.cap_usd:.4f} reached: {what} may cost up to "
                                      f"${amount_usd:.4f}, ${self._spent:.4f} spent")
            await self._released.wait()
        self._reserved += amount_usd
        self._open += 1
        reservation = Reservation(amount_usd)
        if self._ledger is not None:
            try:
                reservation.charge = await self._ledger.open(amount_usd, model=model, cache_key=cache_key)
            except BudgetExhausted:
                self._release(reservation, 0.0)  # a shared ledger refused it: the cap is reached everywhere
                self.exhausted = True
                raise
            except BaseException:
                self._release(reservation, 0.0)  # not booked, so never sent
                raise
        return reservation

    def settle(self, reservation: Reservation, actual_usd: float) -> None:
        """Release a reservation and record what the call really cost (0 for a call that failed unbilled)."""
        if reservation.settled:
            raise RuntimeError("reservation settled twice")
        actual_usd = _booked(actual_usd, reservation.amount_usd)
        self._release(reservation, actual_usd)
        if self._ledger is not None and reservation.charge is not None:
            self._ledger.settle(reservation.charge, actual_usd)

    def settle_unknown(self, reservation: Reservation) -> None:
        """Release a reservation whose call may or may not have been billed (a timeout, a dropped connection, a
        cancellation): it counts as spent at its worst case, and its charge stays open in the ledger."""
        if reservation.settled:
            raise RuntimeError("reservation settled twice")
        self._release(reservation, reservation.amount_usd)
        if self._ledger is not None and reservation.charge is not None:
            self._ledger.unknown(reservation.charge)

    def settle_booked(self, charge: int, reserved_usd: float, actual_usd: float) -> None:
        """Settle a charge an earlier session left open, which `spent_usd` counted at its worst case
        (`reserved_usd`), at what the call cost: a batch request that session submitted and this one saw end."""
        actual_usd = _booked(actual_usd, reserved_usd)
        self._spent += actual_usd - reserved_usd
        if self._ledger is not None:
            self._ledger.settle(charge, actual_usd)
        self._released.set()
        self._released = asyncio.Event()

    def _release(self, reservation: Reservation, actual_usd: float) -> None:
        reservation.settled = True
        self._open -= 1
        # Summing and subtracting many floats leaves residue (1e-17): with nothing open, nothing is reserved.
        self._reserved = self._reserved - reservation.amount_usd if self._open else 0.0
        self._spent += actual_usd
        self._released.set()
        self._released = asyncio.Event()
