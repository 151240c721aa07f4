"""The Gaode client against a local HTTP server that answers like the AMap v5 web API, its caches, the offline
estimate and the choice of source."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval.evaluation.distance import (
    AmapDistances,
    OfflineDistances,
    cache_key,
    haversine_km,
    offline_km,
    open_distances,
)
from errors import UserError

KEY = "test-key-123"
HERE, THERE, NOWHERE = (39.9, 116.4), (39.95, 116.45), (40.5, 117.0)


class AmapLike(BaseHTTPRequestHandler):
    """Answers as restapi.amap.com does: status "0" for a bad key, else routes (none towards NOWHERE)."""

    asked: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        type(self).asked.append({"path": url.path, **query})
        body: dict[str, Any]
        if query.get("key") != KEY:
            body = {"status": "0", "info": "INVALID_USER_KEY", "infocode": "10001"}
        else:
            far = query.get("destination") == f"{NOWHERE[1]},{NOWHERE[0]}"
            routes = [] if far else [{"distance": "12340", "duration": "1500", "steps": []}]
            key = "transits" if url.path.endswith("/integrated") else "paths"
            body = {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(routes)),
                    "route": {"origin": query["origin"], "destination": query["destination"], key: routes}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def amap() -> Iterator[str]:
    AmapLike.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), AmapLike)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def client(url: str, folder: Path, key: str | None = KEY) -> AmapDistances:
    return AmapDistances(key, folder, base_url=url, interval=0, retry_wait=0)


def test_a_live_answer_is_asked_as_the_official_code_asks_and_kept_on_disk(amap: str, tmp_path: Path) -> None:
    first = client(amap, tmp_path)
    assert first.gaode_km(HERE, THERE) == 12.34
    assert AmapLike.asked == [{"path": "/v5/direction/driving", "key": KEY, "origin": "116.4,39.9",
                               "destination": "116.45,39.95", "output": "json", "extensions": "base"}]
    first.close()
    again = client(amap, tmp_path)
    assert again.gaode_km(HERE, THERE) == 12.34
    assert len(AmapLike.asked) == 1  # from the answer cache
    assert KEY.encode() not in (tmp_path / "answers.sqlite").read_bytes()
    again.close()


def test_the_official_cache_is_read_first(amap: str, tmp_path: Path) -> None:
    (tmp_path / "geo_cache.json").write_text(json.dumps({"driving_(39.9, 116.4)_to_(39.95, 116.45)": 3.21}))
    distances = client(amap, tmp_path)
    assert distances.gaode_km(HERE, THERE) == 3.21
    assert AmapLike.asked == []
    assert OfflineDistances(distances.caches).gaode_km(HERE, THERE) == 3.21  # offline: only the official cache
    assert OfflineDistances(distances.caches).gaode_km(THERE, HERE) is None
    distances.close()


def test_the_cache_the_official_evaluator_reads_wins_over_the_other(tmp_path: Path) -> None:
    here_there, there_here = cache_key("driving", HERE, THERE), cache_key("driving", THERE, HERE)
    (tmp_path / "amap_cache").mkdir()
    (tmp_path / "amap_cache" / "geo_cache.json").write_text(json.dumps({here_there: 3.21}))
    (tmp_path / "amap_cache" / "travel_time_cache.json").write_text(json.dumps({here_there: 9.99, there_here: 4.5}))
    offline = open_distances("offline", tmp_path)
    assert (offline.gaode_km(HERE, THERE), offline.gaode_km(THERE, HERE)) == (3.21, 4.5)


def test_no_route_is_an_answer_a_refusal_is_not(amap: str, tmp_path: Path) -> None:
    distances = client(amap, tmp_path)
    assert distances.gaode_km(HERE, NOWHERE) is None
    assert distances.driving_km(HERE, NOWHERE) == offline_km(HERE, NOWHERE)  # corrected mode falls back
    assert len(AmapLike.asked) == 1  # "no route" was cached
    distances.close()
    refused = client(amap, tmp_path / "other", key="wrong")
    assert refused.gaode_km(HERE, THERE) is None
    assert refused.gaode_km(HERE, THERE) is None
    assert len(AmapLike.asked) == 3  # a refusal is asked again
    refused.close()
    keyless = client(amap, tmp_path / "keyless", key=None)
    assert keyless.gaode_km(HERE, THERE) is None
    assert len(AmapLike.asked) == 3  # no key: never asked
    keyless.close()


def test_transit_routes(amap: str, tmp_path: Path) -> None:
    distances = client(amap, tmp_path)
    assert distances.has_transit(HERE, THERE, "010", "09:00") is True
    assert distances.has_transit(HERE, NOWHERE, "010", "09:00") is False
    assert AmapLike.asked[0]["path"] == "/v5/direction/transit/integrated"
    assert (AmapLike.asked[0]["city1"], AmapLike.asked[0]["time"]) == ("010", "09:00")
    distances.close()


def test_an_unreachable_server_gives_no_answer(tmp_path: Path) -> None:
    distances = AmapDistances(KEY, tmp_path, base_url="http://127.0.0.1:9", interval=0, timeout=2)
    assert distances.gaode_km(HERE, THERE) is None
    distances.close()


def test_the_offline_estimate() -> None:
    assert haversine_km((0.0, 0.0), (0.0, 1.0)) == pytest.approx(6371 * 3.141592653589793 / 180)
    assert offline_km((0.0, 0.0), (0.0, 1.0)) == round(111.19492664455873 * 1.3, 2)
    assert cache_key("driving", (39.9, 116.4), (40.0, 116.5)) == "driving_(39.9, 116.4)_to_(40.0, 116.5)"


def test_the_source_by_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    assert open_distances(None, tmp_path).name == "offline"
    with pytest.raises(UserError, match="AMAP_API_KEY"):
        open_distances("amap", tmp_path)
    monkeypatch.setenv("AMAP_API_KEY", KEY)
    chosen = open_distances(None, tmp_path)
    assert chosen.name == "amap"
    assert open_distances("offline", tmp_path).name == "offline"
    assert isinstance(chosen, AmapDistances)
    chosen.close()


class HostileAmap(BaseHTTPRequestHandler):
    """A Gaode look-alike gone bad, one way per `mode`."""

    mode = ""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        route = {"status": "1", "route": {"paths": [{"distance": "12340"}]}}
        bodies = {"negative": '{"status": "1", "route": {"paths": [{"distance": "-5000"}]}}',
                  "boolean": '{"status": "1", "route": {"paths": [{"distance": true}]}}',
                  "absurd": '{"status": "1", "route": {"paths": [{"distance": "99999999999"}]}}',
                  "nested": "[" * 100_000, "quota": '{"status": "0", "info": "CUQPS_HAS_EXCEEDED_THE_LIMIT"}'}
        if self.mode == "status line":
            self.wfile.write(b"HTTP/1.1 two hundred OK\r\n\r\n")
            return
        data = bodies.get(self.mode, json.dumps(route)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data) * (2 if self.mode == "truncated" else 1)))
        self.end_headers()
        if self.mode == "drip":
            for byte in data:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("mode", ["status line", "truncated", "nested", "negative", "boolean", "absurd", "quota",
                                  "drip"])
def test_a_hostile_answer_is_a_counted_failure_never_a_distance_nor_cached(tmp_path: Path, mode: str) -> None:
    HostileAmap.mode = mode
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileAmap)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        distances = AmapDistances(KEY, tmp_path, base_url=f"http://127.0.0.1:{server.server_address[1]}", interval=0,
                                  timeout=0.5, retry_wait=0)
        started = time.monotonic()
        assert distances.gaode_km(HERE, THERE) is None
        assert time.monotonic() - started < 3.0  # a dripping answer has a deadline, not a per-read timeout
        assert distances.failures == 1
        HostileAmap.mode = ""  # the server is fine again: the failed answer was not cached
        assert distances.gaode_km(HERE, THERE) == 12.34
        distances.close()
    finally:
        server.shutdown()
        server.server_close()


def test_after_ten_failures_in_a_row_no_more_calls_are_made(tmp_path: Path) -> None:
    distances = AmapDistances(KEY, tmp_path, base_url="http://127.0.0.1:9", interval=0, timeout=0.5,
                               retry_wait=0)
    for step in range(15):
        assert distances.gaode_km(HERE, (THERE[0] + step, THERE[1])) is None
    assert (distances.live_calls, distances.failures) == (10, 15)
    distances.close()
