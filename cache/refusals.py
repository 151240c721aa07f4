"""Entries a cache would not serve, counted, the first of them logged (a damaged cache would flood the log)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class Refusals:
    """Counts a cache's refused entries (unreadable, or the answer to another request) and logs the first.

    Args:
        where: The cache, as the log names it (a folder, or a database URL without its password).
        advice: What to do about such entries, appended to the log line ("" for nothing).
    """

    def __init__(self, where: str, advice: str = "") -> None:
        self.count = 0
        self._where = where
        self._advice = advice

    def __call__(self, key: str, why: str) -> None:
        self.count += 1
        if self.count == 1:
            log.warning("%s: cache entry %s is %s; ignored, as any others like it will be%s", self._where, key, why,
                        self._advice)
