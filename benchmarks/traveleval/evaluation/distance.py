"""Where the spatial and transfer metrics get distances: the Gaode (AMap) web API or an offline estimate.

The `distance` setting: `amap` (the real Gaode web API, key from `AMAP_API_KEY`) or `offline` (no network); the
default is `amap` when the key is set, else `offline`. Every evaluation result names the setting.

Both sources answer two questions:
- `gaode_km(origin, destination)`: what the official code's Gaode driving call returns, km rounded to 2
  decimals, or None (no route, an API error, or no key and no cached answer). Answers are looked up first in the
  official caches when fetched (`<data>/amap_cache/geo_cache.json` and `travel_time_cache.json`, keyed as the
  official code keys them: "driving_(lat, lon)_to_(lat, lon)" with Python's tuple text), then in our own
  answer cache (`<data>/amap_cache/answers.sqlite`, every successful answer of the live API, never the key),
  then, with a key only, asked live (at most one call per `interval` seconds, as the official 0.4 s sleep).
  `offline` answers from the official caches only: exactly what the official code gets when the API cannot be
  reached (it always has a key: its default configuration carries one).
- `driving_km(origin, destination)` (corrected mode): `amap` as above, falling back to the offline estimate;
  `offline`: the great-circle (haversine, R = 6371 km, the official formula) distance x `DETOUR_FACTOR` 1.3, the
  usual ratio of urban road distance to straight-line distance, rounded to 2 decimals like the API's km.
- `has_transit(origin, destination, city_code, start_time)` (corrected transfer check): `amap` asks the v5
  integrated-transit API (None when it cannot be asked); `offline` assumes a route exists.

The live API is untrusted like any server: a call has a total deadline (`timeout` for the whole answer, not per read:
a server dripping bytes cannot hold it), an answer is read up to `MAX_ANSWER_BYTES`, anything malformed (a bad status
line, a cut body, nested or non-JSON text) is a failed call, and a distance is taken only when it is a whole number
of metres between 0 and `MAX_KM` (a negative, boolean or absurd one is refused, never cached: cached answers are
checked the same way when read). Each failed call is counted (`failures`), so a result can say how many of its
distances could not be had (a key at its QPS limit gives other numbers than a quiet one, officially too); after
`BREAKER_FAILURES` failures in a row this client makes no more calls (said once). A failed call is asked again
up to `ATTEMPTS` times in all, `RETRY_WAIT` s then twice that apart, before the distance counts as failed: a key at
its QPS limit or a server's passing 429 or 500 then gives the numbers a quiet one gives.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Protocol

from benchmarks.traveleval.paths import AMAP_CACHE_FILES, amap_cache_dir
from errors import DataError, UserError

log = logging.getLogger(__name__)

LatLon = tuple[float, float]
MAX_ANSWER_BYTES = 1 << 20
"""A Gaode route answer is a few kB; more is no answer."""
MAX_KM = 5000.0
"""Longer than any drive within or between the ten cities: a distance beyond is refused."""
BREAKER_FAILURES = 10
"""Failed calls in a row after which the API is not asked again during this evaluation."""
DISTANCE_SETTINGS = ("amap", "offline")
AMAP_URL = "https://restapi.amap.com"
KEY_ENV = "AMAP_API_KEY"
URL_ENV = "AMAP_API_URL"
"""Another base URL for the Gaode web API (a proxy or a mirror); default `AMAP_URL`."""
INTERVAL_ENV = "AMAP_INTERVAL"
"""Seconds between two calls (default 0.4, the official sleep; a key with a higher QPS quota may ask faster)."""
ATTEMPTS = 3
RETRY_WAIT = 1.0
_PASSING_REFUSALS = frozenset({"10004", "10014", "10015", "10016", "10019", "10020", "10021"})
"""Gaode refusals worth asking again at once: too frequent, server busy, gateway timeout, QPS limits (a bad key or a
spent daily quota are not)."""
_REFUSED = object()
DETOUR_FACTOR = 1.3
"""Road km per straight-line km in the offline estimate."""
EARTH_RADIUS_KM = 6371.0
CITY_CODES = {"北京": "010", "广州": "020", "上海": "021", "重庆": "023", "南京": "025", "武汉": "027", "成都": "028",
              "苏州": "0512", "杭州": "0571", "深圳": "0755"}
"""Gaode city codes of the ten cities (the official `city_code_converter`)."""


def haversine_km(origin: LatLon, destination: LatLon) -> float:
    """Great-circle km between two (lat, lon) points, as the official `haversine_distance`."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*origin, *destination))
    a = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return EARTH_RADIUS_KM * 2 * math.atan2(math.sqrt(a), math.sqrt(1 - a))


def offline_km(origin: LatLon, destination: LatLon) -> float:
    """The offline road-distance estimate: haversine x `DETOUR_FACTOR`, 2 decimals."""
    return round(haversine_km(origin, destination) * DETOUR_FACTOR, 2)


def cache_key(kind: str, origin: LatLon, destination: LatLon, suffix: str = "") -> str:
    """The official cache key of a query ("driving_(39.9, 116.4)_to_(39.8, 116.3)"; transit adds "_HH:MM_")."""
    return f"{kind}_{tuple(origin)}_to_{tuple(destination)}{suffix}"


class Distances(Protocol):
    """A distance source (module docstring)."""

    @property
    def name(self) -> str: ...

    def gaode_km(self, origin: LatLon, destination: LatLon) -> float | None: ...

    def driving_km(self, origin: LatLon, destination: LatLon) -> float | None: ...

    def has_transit(self, origin: LatLon, destination: LatLon, city_code: str, start_time: str) -> bool | None: ...

    def close(self) -> None:
        """Release the answer cache (a source is not used afterwards)."""
        ...


class OfficialCaches:
    """The official Gaode caches in a folder, read once on first use (absent files are simply empty)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._answers: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[bool, Any]:
        """(found, answer)."""
        with self._lock:
            if self._answers is None:
                self._answers = {}
                for name in reversed(AMAP_CACHE_FILES):  # the official evaluator reads geo_cache.json: it wins
                    self._answers.update(_read_cache(self.folder / name))
        return (key in self._answers, self._answers.get(key))


def _read_cache(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable Gaode cache (JSON object): {exc}") from None
    if not isinstance(found, dict):
        raise DataError(f"{path}: expected a JSON object of cached Gaode answers, got {type(found).__name__}")
    return found


class OfflineDistances:
    """No network: the official caches for `gaode_km`, haversine x detour for `driving_km`."""

    name = "offline"

    def __init__(self, caches: OfficialCaches) -> None:
        self.caches = caches

    def gaode_km(self, origin: LatLon, destination: LatLon) -> float | None:
        found, answer = self.caches.get(cache_key("driving", origin, destination))
        return answer if found else None

    def driving_km(self, origin: LatLon, destination: LatLon) -> float | None:
        return offline_km(origin, destination)

    def has_transit(self, origin: LatLon, destination: LatLon, city_code: str, start_time: str) -> bool | None:
        return True

    def close(self) -> None:
        pass


class AmapDistances:
    """The Gaode web API (v5 driving and integrated transit), behind the official caches and our answer cache."""

    name = "amap"

    def __init__(self, key: str | None, folder: Path, *, caches: OfficialCaches | None = None,
                 base_url: str = AMAP_URL, interval: float = 0.4, timeout: float = 10.0,
                 retry_wait: float = RETRY_WAIT) -> None:
        self._key = key
        self.retry_wait = retry_wait
        self.caches = caches or OfficialCaches(folder)
        self.base_url = base_url.rstrip("/")
        self.interval = interval
        self.timeout = timeout
        self._lock = threading.Lock()
        self._last_call = -math.inf
        self._folder = folder
        self._opened: sqlite3.Connection | None = None
        self.live_calls = 0
        self.failures = 0
        """Live calls that gave no answer (refused, malformed, timed out) or were not made (the breaker open)."""
        self._in_a_row = 0

    def close(self) -> None:
        with self._lock:
            if self._opened is not None:
                self._opened.close()
                self._opened = None

    def _db(self) -> sqlite3.Connection:
        """The answer cache, opened on first use (call with the lock held)."""
        if self._opened is None:
            self._folder.mkdir(parents=True, exist_ok=True)
            self._opened = sqlite3.connect(self._folder / "answers.sqlite", check_same_thread=False)
            self._opened.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        return self._opened

    def gaode_km(self, origin: LatLon, destination: LatLon) -> float | None:
        answer = self._answer(cache_key("driving", origin, destination), "/v5/direction/driving",
                              {"origin": _lon_lat(origin), "destination": _lon_lat(destination)}, "paths")
        return None if answer is None or answer is False else _km(answer)  # a cached one is checked too

    def driving_km(self, origin: LatLon, destination: LatLon) -> float | None:
        found = self.gaode_km(origin, destination)
        return offline_km(origin, destination) if found is None else found

    def has_transit(self, origin: LatLon, destination: LatLon, city_code: str, start_time: str) -> bool | None:
        answer = self._answer(cache_key("transit", origin, destination, f"_{start_time}_"),
                              "/v5/direction/transit/integrated",
                              {"origin": _lon_lat(origin), "destination": _lon_lat(destination), "city1": city_code,
                               "city2": city_code, "time": start_time}, "transits")
        return None if answer is None else answer is not False

    def _answer(self, key: str, path: str, params: dict[str, str], routes: str) -> Any:
        """A cached or live answer: km of the first route, False for "no route", None when unknown."""
        found, answer = self.caches.get(key)
        if found:
            return answer
        with self._lock:
            row = self._db().execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return json.loads(row[0])
        if not self._key:
            return None
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(self.retry_wait * 2 ** (attempt - 1))
            answer = self._ask(path, params, routes)
            refused = answer is _REFUSED
            answer = None if refused else answer
            with self._lock:
                self._in_a_row = 0 if answer is not None else self._in_a_row + 1
            if answer is not None or refused or self._in_a_row >= BREAKER_FAILURES:
                break
        with self._lock:
            self.failures += answer is None
        if answer is not None:
            with self._lock, self._db() as db:
                db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(answer)))
        return answer

    def _ask(self, path: str, params: dict[str, str], routes: str) -> Any:
        with self._lock:
            if self._in_a_row >= BREAKER_FAILURES:
                return None
            wait = self._last_call + self.interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_call = time.monotonic()
            self.live_calls += 1
        query = urllib.parse.urlencode({"key": self._key or "", **params, "output": "json", "extensions": "base"})
        deadline = time.monotonic() + self.timeout
        try:
            with urllib.request.urlopen(f"{self.base_url}{path}?{query}", timeout=self.timeout) as response:
                body = b""
                while chunk := response.read1(1 << 16):
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES or time.monotonic() > deadline:
                        raise TimeoutError("the answer was too long or too slow")
                if response.length:  # the connection closed before the length it announced
                    raise http.client.IncompleteRead(body, response.length)
            data = json.loads(body)
            if data.get("status") != "1":  # never cached; asked again at once only when it passes (QPS, busy)
                self._failed(f"refused ({str(data.get('info'))[:80]})")
                return None if str(data.get("infocode")) in _PASSING_REFUSALS else _REFUSED
            found = data.get("route", {}).get(routes) or []
            if not found:
                return False
            metres = found[0]["distance"]
            km = _km(round(int(metres) / 1000, 2)) if isinstance(metres, str | int) and not isinstance(metres, bool) \
                else None
            return km if km is not None else self._failed(f"an impossible distance {str(metres)[:40]!r}")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
                http.client.HTTPException) as exc:  # unknown, asked again next time
            return self._failed(f"{type(exc).__name__}: {str(exc)[:120]}")

    def _failed(self, why: str) -> None:
        """Says the first failure, and the breaker opening."""
        with self._lock:
            if self.failures == 0:
                log.warning("Gaode API: a call failed (%s); such distances count as unknown, each result says how "
                            "many", why)
            if self._in_a_row + 1 == BREAKER_FAILURES:
                log.warning("Gaode API: %d calls in a row failed (the last: %s): no more calls in this evaluation",
                            BREAKER_FAILURES, why)
        return None


def _km(value: Any) -> float | None:
    """A distance in km as the API's answers give it, or None for one no road has (negative, absurd, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_KM:
        return None
    return float(value)


def _lon_lat(point: LatLon) -> str:
    return f"{point[1]},{point[0]}"


def open_distances(setting: str | None, folder: Path) -> Distances:
    """The distance source of a setting (None: `amap` when AMAP_API_KEY is set, else `offline`) for a data folder.

    Raises:
        UserError: `amap` without a key, or an unknown setting.
    """
    key = os.environ.get(KEY_ENV) or None
    setting = setting or ("amap" if key else "offline")
    caches = OfficialCaches(amap_cache_dir(folder))
    if setting == "offline":
        return OfflineDistances(caches)
    if setting != "amap":
        raise UserError(f"unknown distance setting {setting!r} (expected one of {', '.join(DISTANCE_SETTINGS)})")
    if not key:
        raise UserError(f"--distance amap needs a Gaode web-service key in ${KEY_ENV}")
    interval = os.environ.get(INTERVAL_ENV) or "0.4"
    try:
        seconds = float(interval)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= 60:
        raise UserError(f"${INTERVAL_ENV} = {interval!r}: expected seconds between Gaode calls, from 0 to 60")
    return AmapDistances(key, amap_cache_dir(folder), caches=caches, base_url=os.environ.get(URL_ENV) or AMAP_URL,
                         interval=seconds)
