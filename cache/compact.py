"""The compact form of cache entries: prompts stored once, in shared chunks, and everything compressed.

An agent's prompts grow step by step (a ReAct scratchpad is re-sent 30 times, each time a little longer), and every
prompt of a benchmark repeats the same instructions, so storing each entry's fields whole wrote the same text over and
over. Here each message's content is cut into chunks at line ends chosen by the text itself (a line whose hash ends in
`CUT_EVERY` zero bits closes a chunk, as does `MAX_CHUNK` characters), so two prompts that share a prefix share its
chunks whatever was appended; a chunk is stored once (`CHUNK_TABLE`, its id 64 bits of its sha256); the list of
a message's chunk ids is chunked and stored the same way, and an entry keeps the few ids of that list.
Entries and chunks are zlib-compressed. On a 45-query two-stage run (perf/cache_size.py) this stores about an eighth
of the bytes.

An entry carries the key it was written under: a read checks it (an entry copied under another key is refused at the
cost of one comparison), while `verify` rebuilds the fields and checks that they hash to the key, as for the older,
whole entries, which stay readable (their stored form is JSON, whose first byte `{` no zlib stream starts with).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

CHUNK_TABLE = "CREATE TABLE IF NOT EXISTS Chunk (id INTEGER PRIMARY KEY, data BLOB NOT NULL)"
"""Chunks live in a table of their own in the cache's database, beside diskcache's: a chunk costs its bytes and an
integer, where a diskcache row would add its key twice, nine columns and an expiry index."""
SWEEP_TABLE = "CREATE TABLE IF NOT EXISTS ChunkSweep (id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL)"
"""How many sweeps have deleted chunks: a writer remembers which chunks it stored (so a prompt's next step does not
send them again) only while this count is the one it saw."""
CUT_EVERY = 4
"""A line closes a chunk when its hash is a multiple of this: chunks of about this many lines."""
MAX_CHUNK = 8192
"""Characters a chunk holds at most (long lines, tables)."""
LEVEL = 9
"""zlib level (entries and chunks are small: 9 costs little more than 6 and saves a few per cent)."""


def chunks_of(text: str) -> Iterator[str]:
    """`text` cut into chunks at content-chosen line ends; their concatenation is `text`."""
    start = size = 0
    for line in text.splitlines(keepends=True):
        size += len(line)
        if size >= MAX_CHUNK or int.from_bytes(hashlib.blake2b(line.encode(), digest_size=4).digest()) % CUT_EVERY == 0:
            yield text[start:start + size]
            start, size = start + size, 0
    if size:
        yield text[start:start + size]


def chunk_id(chunk: str) -> int:
    """A chunk's id: 64 bits of its sha256, signed as SQLite's integers are (a collision is a 1-in-2**32 event at
    2**32 chunks)."""
    return int.from_bytes(hashlib.sha256(chunk.encode()).digest()[:8], signed=True)


def encode(key: str, stored: dict[str, Any], new_chunk: Callable[[int, bytes], None]) -> bytes:
    """The compact bytes of an entry (`stored`: the JSON-ready entry with whole fields) written under `key`.

    Args:
        key: The entry's key (kept inside it).
        stored: `{"fields", "response", "cost_usd", "created"}`.
        new_chunk: Receives (id, compressed chunk) for every chunk of the messages; the store keeps each once.
    """
    def store(text: str) -> list[int]:
        refs = []
        for chunk in chunks_of(text):
            refs.append(ref := chunk_id(chunk))
            new_chunk(ref, zlib.compress(chunk.encode(), LEVEL))
        return refs

    fields = dict(stored["fields"])
    # Two levels: the content's chunk ids, one per line, are chunked and stored in turn, so a growing prompt's next
    # step shares its index's first chunks too and the entry keeps a handful of ids.
    fields["messages"] = [{"role": message["role"], "index": store("".join(f"{ref}\n" for ref in
                                                                           store(message["content"])))}
                          for message in fields["messages"]]
    return zlib.compress(orjson.dumps({**stored, "key": key_check(key), "fields": fields}), LEVEL)


def key_check(key: str) -> str:
    """What an entry keeps of its key: enough to tell an entry copied under another key (64 bits)."""
    return key.rpartition(":")[2][:16]


def is_compact(data: bytes) -> bool:
    """Whether stored bytes are a compact entry (a zlib stream) rather than a whole one (JSON)."""
    return data[:1] == b"\x78"


def decode(data: bytes) -> dict[str, Any]:
    """The JSON of a compact entry: its fields' messages still hold chunk ids (`expand` rebuilds them).

    Raises:
        zlib.error, orjson.JSONDecodeError: not a compact entry.
        TypeError: JSON, but not an object.
    """
    entry = orjson.loads(zlib.decompress(data))
    if not isinstance(entry, dict):
        raise TypeError(f"a compact entry is a JSON object, not {type(entry).__name__}")
    return entry


def expand(fields: dict[str, Any], chunk: Callable[[int], bytes | None]) -> dict[str, Any]:
    """The whole fields of a compact entry, from its chunks.

    Raises:
        KeyError: a chunk is missing.
    """
    messages = [{"role": message["role"], "content": _join(_refs(message["index"], chunk), chunk)}
                for message in fields["messages"]]
    return {**fields, "messages": messages}


def _join(refs: Iterable[int], chunk: Callable[[int], bytes | None]) -> str:
    parts = []
    for ref in refs:
        data = chunk(ref)
        if data is None:
            raise KeyError(f"chunk {ref} is missing")
        parts.append(zlib.decompress(data).decode())
    return "".join(parts)


def _refs(index: list[int], chunk: Callable[[int], bytes | None]) -> list[int]:
    return [int(line) for line in _join(index, chunk).splitlines()]


def chunk_ids(data: bytes, chunk: Callable[[int], bytes | None]) -> list[int]:
    """The ids of the chunks a compact entry's stored bytes refer to, its index chunks included."""
    ids = []
    for message in decode(data)["fields"]["messages"]:
        ids += message["index"] + _refs(message["index"], chunk)
    return ids
