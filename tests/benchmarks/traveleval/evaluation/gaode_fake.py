"""A Gaode (AMap) v5 web API stand-in on 127.0.0.1 that misbehaves on demand: every reply a test scripts, from a
healthy route to a broken status line, for the distance client and for `tripbench evaluate --distance amap`."""

from __future__ import annotations

import json
import math
import socketserver
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reply = Callable[[dict[str, str], int], bytes]
"""(the request's query, its number from 0) -> the raw bytes written back, status line included."""


def http(body: bytes | str, status: str = "200 OK", headers: str = "") -> bytes:
    data = body.encode() if isinstance(body, str) else body
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n{headers}"
            "Connection: close\r\n\r\n").encode() + data


def route(metres: object) -> bytes:
    return http(json.dumps({"status": "1", "info": "OK", "infocode": "10000", "count": "1",
                            "route": {"paths": [{"distance": metres, "duration": "600"}],
                                      "transits": [{"distance": metres}]}}))


def healthy(query: dict[str, str], number: int) -> bytes:
    """A route as long as the straight line x 1.4, in metres (so every pair has its own, stable distance)."""
    (lon1, lat1), (lon2, lat2) = (map(float, query[end].split(",")) for end in ("origin", "destination"))
    metres = math.dist((lat1, lon1 * math.cos(math.radians(lat1))), (lat2, lon2 * math.cos(math.radians(lat1))))
    return route(str(round(metres * 111_195 * 1.4)))


HOSTILE: dict[str, Reply] = {
    "bad status line": lambda q, n: b"HTTP/1.1 two hundred\r\n\r\n",
    "truncated body": lambda q, n: http(b'{"status": "1"')[:-3].replace(b"Length: 14", b"Length: 900"),
    "oversized headers": lambda q, n: http("{}", headers="".join(f"X-{i}: {'a' * 100}\r\n" for i in range(200))),
    "nested JSON": lambda q, n: http("[" * 100_000 + "]" * 100_000),
    "5,000-digit distance": lambda q, n: http('{"status": "1", "route": {"paths": [{"distance": ' + "9" * 5000
                                              + "}]}}"),
    "HTTP 429": lambda q, n: http('{"status": "0"}', "429 Too Many Requests"),
    "HTTP 500": lambda q, n: http("oops", "500 Internal Server Error"),
    "QPS refusal": lambda q, n: http(json.dumps({"status": "0", "info": "CUQPS_HAS_EXCEEDED_THE_LIMIT",
                                                 "infocode": "10021"})),
    "negative distance": lambda q, n: route("-5000"),
    "boolean distance": lambda q, n: route(True),
    "absurd distance": lambda q, n: route("999999999"),
}
"""Replies that are no distance, each by name."""


class GaodeFake:
    """The server: `url`, `reply` (what it answers now), `asked` (the queries so far)."""

    def __init__(self) -> None:
        self.reply: Reply = healthy
        self.asked: list[dict[str, str]] = []
        self.drip_seconds = 0.0
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline().decode("latin-1")
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(line.split(" ")[1]).query))
                number = len(fake.asked)
                fake.asked.append(query)
                data = fake.reply(query, number)
                try:
                    if fake.drip_seconds:  # headers at once, then the body a byte at a time
                        head, _, body = data.partition(b"\r\n\r\n")
                        self.wfile.write(head + b"\r\n\r\n")
                        for byte in body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(fake.drip_seconds)
                    else:
                        self.wfile.write(data)
                except OSError:
                    pass

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[GaodeFake]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
