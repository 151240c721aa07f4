"""How a run uses the cache (docs/architecture.md §3.2)."""

from __future__ import annotations

from enum import StrEnum


class CacheMode(StrEnum):
    """What the gateway does with the cache on each call."""

    READWRITE = "readwrite"
    """Default: serve hits, store what the provider returns."""
    REPLAY = "replay"
    """Serve hits only; a miss raises `ReplayMiss` (free, deterministic reruns and CI)."""
    REFRESH = "refresh"
    """Never read, always call the provider and overwrite the entry."""
    OFF = "off"
    """Neither read nor write."""

    @property
    def reads(self) -> bool:
        """Whether a stored entry may answer a call."""
        return self in (CacheMode.READWRITE, CacheMode.REPLAY)

    @property
    def writes(self) -> bool:
        """Whether a provider's response is stored."""
        return self in (CacheMode.READWRITE, CacheMode.REFRESH)
