"""The run's spend cap: spent + reserved never passes it, however many calls run at once.

Before a provider call the gateway reserves the call's worst-case cost (estimated prompt tokens plus `max_tokens`,
at the price table); the call is not sent if that reservation would cross the cap. Afterwards the reservation is
settled with the actual cost and the unused part is released. Reserve-then-settle under one lock is what makes
the cap hold under concurrency: a check-then-spend budget (LiteLLM's) lets every call in a burst see the same
headroom.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from providers.errors import BudgetExhausted


@dataclass(slots=True)
class Reservation:
    """Money set aside for one call until it is settled."""

    amount_usd: float
    settled: bool = False


class SpendCap:
    """Spent and reserved dollars against an optional cap; safe from threads and from asyncio tasks.

    Args:
        cap_usd: The most the run may spend; None for a run without a cap (costs are still summed).
        spent_usd: What earlier sessions of a resumed run already spent against the same cap.
    """

    def __init__(self, cap_usd: float | None = None, *, spent_usd: float = 0.0) -> None:
        if cap_usd is not None and cap_usd < 0:
            raise ValueError(f"spend cap must be >= 0, got {cap_usd}")
        self.cap_usd = cap_usd
        self._spent = spent_usd
        self._reserved = 0.0
        self._open = 0  # unsettled reservations: at 0, `_reserved` is reset so float residue never reads as a hold
        self._lock = threading.Lock()  # never held across an await: only arithmetic happens under it

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
        with self._lock:
            return None if self.cap_usd is None else self.cap_usd - self._spent - self._reserved

    def reserve(self, amount_usd: float, *, what: str = "the next call") -> Reservation:
        """Set `amount_usd` aside, or refuse.

        Args:
            amount_usd: The call's worst-case cost.
            what: Names the call in the error message.

        Raises:
            BudgetExhausted: Spent + reserved + `amount_usd` would pass the cap.
        """
        with self._lock:
            if self.cap_usd is not None and self._spent + self._reserved + amount_usd > self.cap_usd:
                raise BudgetExhausted(
                    f"spend cap ${self.cap_usd:.4f} reached: {what} may cost up to ${amount_usd:.4f}, "
                    f"${self._spent:.4f} spent and ${self._reserved:.4f} reserved"
                )
            self._reserved += amount_usd
            self._open += 1
        return Reservation(amount_usd)

    def settle(self, reservation: Reservation, actual_usd: float) -> None:
        """Release a reservation and record what the call really cost (0 for a call that failed unbilled)."""
        with self._lock:
            if reservation.settled:
                raise RuntimeError("reservation settled twice")
            reservation.settled = True
            self._open -= 1
            # Summing and subtracting many floats leaves residue (1e-17): with nothing open, nothing is reserved.
            self._reserved = self._reserved - reservation.amount_usd if self._open else 0.0
            self._spent += actual_usd
