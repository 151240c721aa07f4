"""Cache reads gathered per turn of the event loop: the reads every rollout in flight asks for while the loop runs
its ready tasks are answered by one `get_many`, one statement (one round trip to a team database) for them all.

A replay runs dozens of rollouts at once, each waiting on its next cached answer; read one by one, a hit paid a
statement, its locks and its connection check each time. The wait costs the reader one turn of the loop.

A read the cache could not make (`errors.Interruption` with `retry_after_s`: a team database restarting) is never a
miss, which would pay for a call the cache may hold: the reader waits and reads again, until the cache says to give
up; the rollout then ends `interrupted`.
"""

from __future__ import annotations

import asyncio

from cache.interface import CallCache
from cache.store import CacheEntry
from errors import Interruption


class CacheReads:
    """Reads of one cache, gathered until the event loop's next turn.

    Made on the loop's thread: on a worker thread, the GIL handed back and forth cost more than the read (a replay
    took a quarter longer).
    """

    def __init__(self, cache: CallCache) -> None:
        self._cache = cache
        self._waiting: list[tuple[str, asyncio.Future[CacheEntry | None]]] = []

    async def get(self, key: str) -> CacheEntry | None:
        """The entry under `key`, or None; a use of the cache, as `CallCache.get`, waiting while the cache is out of
        reach for a while."""
        while True:
            try:
                return await self._read(key)
            except Interruption as exc:
                if exc.retry_after_s is None:
                    raise
                await asyncio.sleep(exc.retry_after_s)

    async def _read(self, key: str) -> CacheEntry | None:
        loop = asyncio.get_running_loop()
        if not self._waiting:
            loop.call_soon(self._answer)
        future: asyncio.Future[CacheEntry | None] = loop.create_future()
        self._waiting.append((key, future))
        return await future

    def _answer(self) -> None:
        waiting, self._waiting = self._waiting, []
        try:
            found = self._cache.get_many([key for key, _ in waiting])
        except Exception as exc:  # each reader gets the error its own read would have raised
            for _, future in waiting:
                if not future.done():
                    future.set_exception(exc)
            return
        for key, future in waiting:
            if not future.done():  # its reader was cancelled meanwhile
                future.set_result(found.get(key))
