"""A pack: one file holding everything needed to re-execute a run anywhere for $0 (`tripbench pack`, `tripbench
replay`); the format is documented in docs/pack-format.md.

    TBPACK <version>\\n                 the magic line
    {"body_sha256": ..., ...}\\n         one JSON line: the sha256 and size of the body
    <body>                              a SQLite database image (deserialized in memory: nothing is unpacked)

The body holds `meta` (key -> value), `files` (the run's spec, identity, provenance, session stamps, results store and
output files, each zlib-compressed with the sha256 of its bytes) and `cache` (the key and sha256 of exactly the cache
entries the run's rollouts used; the entries themselves are the lines of the file `cache-entries.jsonl`, their long
messages as the numbers of their lines in the file `cache-lines.txt`, which holds each distinct line once). The digest
of the whole body is checked before any row is read, so a byte altered anywhere in the file is refused; each file's
and entry's digest is checked again as it is read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from errors import UserError

MAGIC = b"TBPACK"
VERSION = 1
"""The format this code writes and the newest it reads."""
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE cache (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, line INTEGER NOT NULL);
"""
LINES_FROM = 256
"""A message this long is stored as the numbers of its lines in the file `LINES`, each distinct line once (an agent's
calls resend the same prompt and history, line for line: stored whole, a pack would hold each many times)."""
ENTRIES = "cache-entries.jsonl"
"""In `files`: the cache entries, one JSON a line (line n, from 1, is the entry whose `cache` row says n), compressed
together: entries of one agent differ little, and compressed one by one they would not shrink."""
LINES = "cache-lines.txt"
"""In `files`: every distinct line of the entries' long messages, line n the one numbered n, compressed together."""
LEVEL = 9
"""zlib's best compression: a pack is written once and read rarely."""


class PackRefused(UserError):
    """A file that is not a pack this tripbench reads, or one altered since it was written."""


@dataclass(frozen=True, slots=True)
class PackStats:
    files: int
    entries: int
    size: int
    """Bytes of the pack file."""


def write_pack(path: Path, meta: Mapping[str, str], files: Mapping[str, bytes],
               entries: Iterable[tuple[str, bytes]]) -> PackStats:
    """Writes a pack (to a temporary file renamed over `path`: a reader never sees half of one)."""
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        body_path = Path(folder) / "body.sqlite"
        db = sqlite3.connect(body_path)
        try:
            db.executescript(SCHEMA)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("format_version", str(VERSION)),
                                                              ("packed_at", str(time.time()))])
            db.executemany("INSERT INTO files VALUES (?, ?, ?, ?)",
                           [(name, _sha(data), len(data), zlib.compress(data, LEVEL)) for name, data in files.items()])
            rows, lines = list[bytes](), dict[str, int]()
            for key, data in entries:
                compact = _compacted(data, lines)
                if db.execute("INSERT OR IGNORE INTO cache VALUES (?, ?, ?)",
                              (key, _sha(compact), len(rows) + 1)).rowcount:
                    rows.append(compact)
            count = len(rows)
            for name, text in ((ENTRIES, b"\n".join(rows)), (LINES, "\n".join(lines).encode())):
                db.execute("INSERT INTO files VALUES (?, ?, ?, ?)", (name, _sha(text), len(text),
                                                                     zlib.compress(text, LEVEL)))
            db.commit()
            db.execute("VACUUM")  # no free page: the body is only what it holds
        finally:
            db.close()
        body = body_path.read_bytes()
        header = json.dumps({"body_sha256": _sha(body), "body_bytes": len(body)}).encode()
        partial = Path(folder) / "pack.partial"
        partial.write_bytes(MAGIC + f" {VERSION}\n".encode() + header + b"\n" + body)
        partial.replace(path)
    return PackStats(len(files), count, path.stat().st_size)


class Pack:
    """A pack read and verified whole (`open_pack`); its body stays in memory, read-only."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path = path
        self._db = db
        self.meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        self._lines: list[str] | None = None

    def file(self, name: str) -> bytes | None:
        row = self._db.execute("SELECT sha256, data FROM files WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._checked(name, row[0], row[1])

    def names(self) -> list[str]:
        return [name for (name,) in self._db.execute("SELECT name FROM files ORDER BY name")]

    def entries(self) -> Iterator[tuple[str, bytes]]:
        """Each cache entry as the cache stores it (JSON), its messages whole again."""
        stored = (self.file(ENTRIES) or b"").split(b"\n")
        for key, digest, line in self._db.execute("SELECT key, sha256, line FROM cache ORDER BY key").fetchall():
            data = stored[line - 1] if 1 <= line <= len(stored) else b""
            if _sha(data) != digest:
                raise PackRefused(f"{self.path}: cache entry {key} does not match its digest: the pack was altered; "
                                  "nothing ran")
            entry = json.loads(data)
            for message in entry.get("fields", {}).get("messages", []):
                if isinstance(ids := message.get("content"), dict) and set(ids) == {"$lines"}:
                    message["content"] = "\n".join(self._line(int(n)) for n in ids["$lines"].split())
            yield key, json.dumps(entry).encode()

    def _line(self, n: int) -> str:
        if self._lines is None:  # read once: every entry needs them
            self._lines = (self.file(LINES) or b"").decode().split("\n")
        if not 1 <= n <= len(self._lines):
            raise PackRefused(f"{self.path}: a message line the entries name is not in the pack: it was altered")
        return self._lines[n - 1]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _checked(self, what: str, digest: str, data: bytes) -> bytes:
        try:
            plain = zlib.decompress(data)
        except zlib.error:
            plain = b""
        if _sha(plain) != digest:
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
        pack = Pack(path, db)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise PackRefused(f"{path}: damaged pack body ({exc}); nothing ran") from None
    return pack


def _compacted(data: bytes, lines: dict[str, int]) -> bytes:
    """A cache entry's JSON with each long message as the ids of its lines (`lines`: the ids given so far)."""
    entry = json.loads(data)
    for message in entry.get("fields", {}).get("messages", []):
        if isinstance(text := message.get("content"), str) and len(text) >= LINES_FROM:
            ids = []
            for line in text.split("\n"):
                if (known := lines.get(line)) is None:
                    known = lines[line] = len(lines) + 1
                ids.append(str(known))
            message["content"] = {"$lines": " ".join(ids)}
    return json.dumps(entry, separators=(",", ":")).encode()


def pack_digest(path: Path) -> str:
    """The sha256 of a pack file: the name its replays are stamped with."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
