"""The spend cap's write-ahead ledger in the results store: a charge per provider call, opened before it is sent.

`StoreLedger.open` returns once the charge is committed; `settle` queues the real cost. Charges opened or settled
while a commit is under way go into the next one, so under load many calls share one transaction (group commit) and
a call waits for at most about two commits before it is sent. A settlement is not waited for: if the process dies
first, the charge stays open and counts at its worst case until `settle_left_open` settles it from the cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from cache import CacheStore, CallCache
from runner.store.writer import ResultsStore

log = logging.getLogger(__name__)


class StoreLedger:
    """The `runner.ladder.budget.Ledger` of one session of a run.

    Args:
        store: The run's results store.
        session: The session charges are opened in.
    """

    def __init__(self, store: ResultsStore, session: int) -> None:
        self._store = store
        self._session = session
        self._opening: list[tuple[str, str | None, float, asyncio.Future[int]]] = []
        self._settling: list[tuple[int, float]] = []
        self._writer: asyncio.Task[None] | None = None

    async def open(self, amount_usd: float, *, model: str, cache_key: str | None) -> int:
        opened: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._opening.append((model, cache_key, amount_usd, opened))
        self._wake()
        try:
            return await asyncio.shield(opened)
        except asyncio.CancelledError:
            # The call will not be sent: once the charge is committed, it is settled at nothing.
            opened.add_done_callback(self._settle_unsent)
            raise

    def settle(self, charge: int, cost_usd: float) -> None:
        self._settling.append((charge, cost_usd))
        self._wake()

    def unknown(self, charge: int) -> None:
        """Nothing to do: an open charge already counts at its worst case (`ResultsStore.spent_usd`)."""

    async def aclose(self) -> None:
        """Writes what is still queued."""
        while self._writer is not None and not self._writer.done():
            await self._writer

    def _settle_unsent(self, opened: asyncio.Future[int]) -> None:
        if not opened.cancelled() and opened.exception() is None:
            self.settle(opened.result(), 0.0)

    def _wake(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write(), name="ledger-writer")

    async def _write(self) -> None:
        while self._opening or self._settling:
            opening, self._opening = self._opening, []
            settling, self._settling = self._settling, []
            try:
                ids = await self._store.book(self._session, [row[:3] for row in opening], settling)
            except Exception as exc:  # the calls waiting to be booked are not sent; unsettled charges stay open
                if settling:
                    log.warning("%s: %d settled charges not written (%s); they count at their worst case",
                                self._store.path, len(settling), exc)
                for *_, opened in opening:
                    if not opened.done():
                        opened.set_exception(exc)
                continue
            for (*_, opened), charge in zip(opening, ids, strict=True):
                if not opened.done():
                    opened.set_result(charge)


async def settle_left_open(store: ResultsStore, cache_dir: Path, cache: CallCache | None = None) -> int:
    """Settles the charges dead sessions left open: at nothing those of batched calls that joined no recorded batch
    (never sent: `ResultsStore.never_sent_charges`), else, where their answer reached the cache, at the cost the entry
    records.

    `cache`: the run's open cache (the team's, say); None: the cache folder `cache_dir`, if there is one.

    The others stay open and count as spent at their worst case: the provider may have billed them, and nothing says
    for how much.

    Returns:
        How many charges were settled.
    """
    never_sent = set(await store.never_sent_charges())
    settled = [(charge, 0.0) for charge in sorted(never_sent)]
    left_open = [(charge, key) for charge, key in await store.open_charges() if charge not in never_sent]
    if left_open and (cache is not None or cache_dir.is_dir()):
        with contextlib.nullcontext(cache) if cache is not None else CacheStore(cache_dir) as found:
            entries = ((charge, found.peek(key)) for charge, key in left_open if key is not None)
            settled += [(charge, entry.cost_usd or 0.0) for charge, entry in entries if entry is not None]
    if settled:
        await store.book(0, [], settled)
    return len(settled)
