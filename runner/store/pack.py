"""A pack: one file holding everything needed to re-execute a run anywhere for $0 (`tripbench pack`, `tripbench
replay`); the format is documented in docs/pack-format.md.

    TBPACK <version>\\n                 the magic line
    {"body_sha256": ..., ...}\\n         one JSON line: the sha256 and size of the body
    <body>                              a SQLite database image (deserialized in memory: nothing is unpacked)

The body (version 2) holds `meta` (key -> value) and `files`, each xz-compressed (lzma) with the sha256 of its bytes:
the run's spec, identity, provenance, session stamps and the digests of its output files (regenerated on replay, not
stored), its results store (`results.sqlite`), and exactly the cache entries its rollouts used (`cache-entries.jsonl`,
one a line, line n entry n). Each long text of the entries and of the store's steps is stored as the numbers of its
lines in `cache-lines.txt`, which holds each distinct line once; the store names an entry by its number, and an
entry's key, the digest of its fields, is computed again on reading (`runner.store.pack_compact`). The digest of the
whole body is checked before any row is read, so a byte altered anywhere in the file is refused; each file's digest is
checked again as it is read. Version 1 packs (zlib, a `cache` table of keys) are still read.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import sqlite3
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from cache.keys import digest
from errors import UserError
from runner.store.pack_compact import Lines, compact_store, restore_store

MAGIC = b"TBPACK"
VERSION = 2
"""The format this code writes and the newest it reads (it reads every older one)."""
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL);
"""
STORE = "results.sqlite"
"""In `files`: the results store, compacted (`runner.store.pack_compact.compact_store`)."""
ENTRIES = "cache-entries.jsonl"
"""In `files`: the cache entries, one JSON a line (line n, from 1, is entry n), their long texts compacted; compressed
together: entries of one agent differ little, and compressed one by one they would not shrink."""
LINES = "cache-lines.txt"
"""In `files`: every distinct line of the long texts of the entries and the store's steps, line n the one numbered n."""
PRESET = 9
"""xz at its best preset (a 64 MiB window: a table a tool returned is found again however far back it was sent): a
pack is written once and read rarely."""


class PackRefused(UserError):
    """A file that is not a pack this tripbench reads, or one altered since it was written."""


@dataclass(frozen=True, slots=True)
class PackStats:
    files: int
    entries: int
    size: int
    """Bytes of the pack file."""


def write_pack(path: Path, meta: Mapping[str, str], files: Mapping[str, bytes], store: bytes,
               entries: Iterable[tuple[str, bytes]]) -> PackStats:
    """Writes a pack (to a temporary file renamed over `path`: a reader never sees half of one).

    Args:
        store: An image of the run's results store.
        entries: Each cache entry's key and its JSON as the cache stores it.
    """
    lines, rows, numbers = Lines(), list[bytes](), dict[str, int]()
    for key, data in entries:
        if key in numbers:
            continue
        entry = orjson.loads(data)
        # the key is not stored: a reader computes it from the fields, so an entry it would not find is refused here
        if digest(entry.get("fields", {})) != key:
            raise UserError(f"cache entry {key}: its fields do not make its key (a cache written by another key "
                            "scheme?): it cannot be packed")
        numbers[key] = len(rows) + 1
        rows.append(orjson.dumps(lines.compact(entry)))
    parts = {**files, STORE: compact_store(store, lines, numbers), ENTRIES: b"\n".join(rows), LINES: lines.text()}
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        body_path = Path(folder) / "body.sqlite"
        db = sqlite3.connect(body_path)
        try:
            db.executescript(SCHEMA)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("format_version", str(VERSION)),
                                                              ("packed_at", str(time.time()))])
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?)", [(name, _sha(data), len(data),
                                                                      lzma.compress(data, preset=PRESET))
                                                                     for name, data in parts.items()])
            db.commit()
            db.execute("VACUUM")  # no free page: the body is only what it holds
        finally:
            db.close()
        body = body_path.read_bytes()
        header = json.dumps({"body_sha256": _sha(body), "body_bytes": len(body)}).encode()
        partial = Path(folder) / "pack.partial"
        partial.write_bytes(MAGIC + f" {VERSION}\n".encode() + header + b"\n" + body)
        partial.replace(path)
    return PackStats(len(files), len(rows), path.stat().st_size)


class Pack:
    """A pack read and verified whole (`open_pack`); its body stays in memory, read-only."""

    def __init__(self, path: Path, db: sqlite3.Connection, version: int) -> None:
        self.path = path
        self.version = version
        self._db = db
        self.meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        self._lines: Lines | None = None
        self._keys: list[str] | None = None

    def file(self, name: str) -> bytes | None:
        row = self._db.execute("SELECT sha256, data FROM files WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._checked(name, row[0], row[1])

    def names(self) -> list[str]:
        return [name for (name,) in self._db.execute("SELECT name FROM files ORDER BY name")]

    def entries(self) -> Iterator[tuple[str, bytes]]:
        """Each cache entry's key and its JSON as the cache stores it, its texts whole again."""
        stored = text.split(b"\n") if (text := self.file(ENTRIES)) else []
        if self.version == 1:  # a `cache` table: key, digest of the compacted line, its number
            numbered = self._db.execute("SELECT key, sha256, line FROM cache ORDER BY key").fetchall()
        else:  # line n is entry n, its key the digest of its fields
            numbered = [(None, None, n) for n in range(1, len(stored) + 1)]
        keys = []
        for key, sha, line in numbered:
            data = stored[line - 1] if 1 <= line <= len(stored) else b""
            if sha is not None and _sha(data) != sha:
                raise PackRefused(f"{self.path}: cache entry {key} does not match its digest: the pack was altered; "
                                  "nothing ran")
            try:
                entry = self._text().restore(orjson.loads(data))
            except (IndexError, ValueError):
                raise PackRefused(f"{self.path}: cache entry {line} is damaged: the pack was altered") from None
            keys.append(key := key or digest(entry.get("fields", {})))
            yield key, orjson.dumps(entry)
        self._keys = keys

    def store(self) -> bytes | None:
        """The image of the run's results store, whole again (None: the pack has none)."""
        data = self.file(STORE)
        if data is None or self.version == 1:
            return data
        keys = self._keys if self._keys is not None else [key for key, _ in self.entries()]
        try:
            return restore_store(data, self._text(), keys)
        except (IndexError, ValueError, sqlite3.DatabaseError):
            raise PackRefused(f"{self.path}: its results store is damaged: the pack was altered") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _text(self) -> Lines:
        if self._lines is None:  # read once: every entry needs them
            self._lines = Lines(self.file(LINES) or b"")
        return self._lines

    def _checked(self, what: str, sha: str, data: bytes) -> bytes:
        try:
            plain = zlib.decompress(data) if self.version == 1 else lzma.decompress(data)
        except (zlib.error, lzma.LZMAError):
            plain = b""
        if _sha(plain) != sha:
            raise PackRefused(f"{self.path}: {what} does not match its digest: the pack was altered; nothing ran")
        return plain


def open_pack(path: Path) -> Pack:
    """Reads a pack and checks it whole before anything else reads it.

    Raises:
        PackRefused: not a pack, a newer format, or a byte altered anywhere (naming the file).
        UserError: the file cannot be read.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    magic, _, rest = raw.partition(b"\n")
    header, _, body = rest.partition(b"\n")
    name, _, version = magic.partition(b" ")
    if name != MAGIC or not version.isdigit():
        raise PackRefused(f"{path}: not a tripbench pack (it starts with {raw[:16]!r}); nothing ran")
    if int(version) > VERSION:
        raise PackRefused(f"{path}: pack format {int(version)}, this tripbench reads format {VERSION} and older: "
                          "upgrade tripbench (pip install -U tripbench) to replay it")
    try:
        fields = json.loads(header)
        expected, size = str(fields["body_sha256"]), int(fields["body_bytes"])
    except (ValueError, KeyError, TypeError):
        raise PackRefused(f"{path}: damaged pack header: the pack was altered; nothing ran") from None
    if len(body) != size or _sha(body) != expected:
        raise PackRefused(f"{path}: its content does not match its sha256 ({expected[:12]}…): the pack was altered "
                          "or cut short; nothing ran")
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(body)
        pack = Pack(path, db, int(version))
    except sqlite3.DatabaseError as exc:
        db.close()
        raise PackRefused(f"{path}: damaged pack body ({exc}); nothing ran") from None
    return pack


def pack_digest(path: Path) -> str:
    """The sha256 of a pack file: the name its replays are stamped with."""
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
