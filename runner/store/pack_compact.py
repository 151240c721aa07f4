"""What a pack stores once (docs/pack-format.md): every long text as the numbers of its lines in one file of distinct
lines, and each cache key of the results store as the number of its cache entry.

An agent's calls resend the same prompt and history line for line, a tool's answer comes back in the step that made
it and in every later prompt, and each call's key is in the store's `llm_call` and `charge` rows: stored whole, a pack
would hold each of them many times, and a key (64 hex digits) does not compress at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

LINES_FROM = 256
"""A string this long is stored as the numbers of its lines."""
MARK = "$lines"
"""A compacted string: `{"$lines": "12 13 7 ..."}`."""
KEYED = ("llm_call", "charge", "batch_request")
"""The results store's tables with a `cache_key` column: in a pack, `#n` stands for the key of entry n (from 1)."""


class Lines:
    """The distinct lines of the texts compacted so far (a pack's writer), or of a pack's file of lines (its reader),
    line n numbered n from 1."""

    def __init__(self, text: bytes = b"") -> None:
        self._lines = text.decode().split("\n") if text else []
        self._ids = {line: n for n, line in enumerate(self._lines, 1)}

    def text(self) -> bytes:
        return "\n".join(self._lines).encode()

    def compact(self, value: Any) -> Any:
        """A JSON value with each string of `LINES_FROM` characters or more, at any depth, as the numbers of its
        lines."""
        if isinstance(value, str):
            return {MARK: " ".join(str(self._id(line)) for line in value.split("\n"))} if len(value) >= LINES_FROM \
                else value
        if isinstance(value, dict):
            return {name: self.compact(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.compact(item) for item in value]
        return value

    def restore(self, value: Any) -> Any:
        """`compact`'s value whole again.

        Raises:
            IndexError: a line number this book does not hold (a damaged pack).
        """
        if isinstance(value, dict):
            if len(value) == 1 and isinstance(ids := value.get(MARK), str):
                return "\n".join(self._line(int(n)) for n in ids.split())
            return {name: self.restore(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.restore(item) for item in value]
        return value

    def _id(self, line: str) -> int:
        if (known := self._ids.get(line)) is None:
            self._lines.append(line)
            known = self._ids[line] = len(self._lines)
        return known

    def _line(self, n: int) -> str:
        if not 1 <= n <= len(self._lines):
            raise IndexError(n)
        return self._lines[n - 1]


def compact_store(store: bytes, lines: Lines, numbers: Mapping[str, int]) -> bytes:
    """A results store's image as a pack holds it: each step's long strings compacted (where they come back byte for
    byte), each cache key of `numbers` as `#` and its entry's number; vacuumed (no free page)."""
    db = opened(store)
    try:
        changed = []
        for rollout, idx, data in db.execute("SELECT rollout_id, idx, data FROM step").fetchall():
            compact = lines.compact(value := orjson.loads(data))
            if compact != value and orjson.dumps(lines.restore(compact)).decode() == data:
                changed.append((orjson.dumps(compact).decode(), rollout, idx))
        db.executemany("UPDATE step SET data = ? WHERE rollout_id = ? AND idx = ?", changed)
        db.execute("CREATE TEMP TABLE entry (key TEXT PRIMARY KEY, ref TEXT NOT NULL)")
        db.executemany("INSERT INTO entry VALUES (?, ?)", [(key, f"#{n}") for key, n in numbers.items()])
        _replace_keys(db, "key", "ref")
        db.commit()
        db.execute("VACUUM")
        return db.serialize()
    finally:
        db.close()


def restore_store(store: bytes, lines: Lines, keys: Sequence[str]) -> bytes:
    """`compact_store`'s image whole again (`keys`: entry n's key at n - 1).

    Raises:
        IndexError, ValueError: a line number this book does not hold, or a step that is not JSON (a damaged pack).
    """
    db = opened(store)
    try:
        rows = db.execute("SELECT rollout_id, idx, data FROM step WHERE instr(data, ?) > 0", (f'{{"{MARK}":',))
        db.executemany("UPDATE step SET data = ? WHERE rollout_id = ? AND idx = ?",
                       [(orjson.dumps(lines.restore(orjson.loads(data))).decode(), rollout, idx)
                        for rollout, idx, data in rows.fetchall()])
        db.execute("CREATE TEMP TABLE entry (key TEXT NOT NULL, ref TEXT PRIMARY KEY)")
        db.executemany("INSERT INTO entry VALUES (?, ?)", [(key, f"#{n}") for n, key in enumerate(keys, 1)])
        _replace_keys(db, "ref", "key")
        db.commit()
        return db.serialize()
    finally:
        db.close()


def _replace_keys(db: sqlite3.Connection, found: str, put: str) -> None:
    for table in KEYED:
        db.execute(f"UPDATE {table} SET cache_key = (SELECT {put} FROM temp.entry WHERE {found} = cache_key) "
                   f"WHERE cache_key IN (SELECT {found} FROM temp.entry)")


def opened(image: bytes) -> sqlite3.Connection:
    """A database image opened in memory; one written in WAL mode (a results store) is read as a rollback-journal
    database (header bytes 18 and 19: 2 is WAL, 1 is not), which an image in memory must be."""
    if image[18:20] == b"\x02\x02":
        image = image[:18] + b"\x01\x01" + image[20:]
    db = sqlite3.connect(":memory:")
    db.deserialize(image)
    return db
