"""Content-addressed disk cache of LLM calls (diskcache, sha256 keys over canonical JSON)."""

from cache.explain import Explanation, explain, load_request
from cache.interface import CallCache
from cache.keys import KEY_SCHEME, cache_key, digest, key_fields
from cache.modes import CacheMode
from cache.store import CacheEntry, CacheStats, CacheStore

__all__ = [
    "KEY_SCHEME",
    "CacheEntry",
    "CacheMode",
    "CacheStats",
    "CacheStore",
    "CallCache",
    "Explanation",
    "cache_key",
    "digest",
    "explain",
    "key_fields",
    "load_request",
]
