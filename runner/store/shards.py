"""A sharded run on disk, and how its stores read as one run.

    RUN_DIR/shard-1-of-3/results.sqlite     shard 1's own run directory (`tripbench run SPEC --shard 1/3`)
    RUN_DIR/shard-2-of-3/results.sqlite     ... each written by one process, on its machine's local disk
    RUN_DIR/shard-3-of-3/results.sqlite

Shards of one run share no file: each is a complete run directory of its share of the rollouts (lock, sessions,
outputs). Run on several machines, the shard folders are copied into one RUN_DIR afterwards (`rsync`, `cp -r`);
`load_run(RUN_DIR)` then reads them as one run: every table copied into a private temporary SQLite database, ids
shifted so they stay distinct (`merge_stores`). Rollouts are partitioned by key (`runner.engine.shard`), so no key is
in two shards of one count; folders of two counts (a run re-split) are refused rather than counted twice.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from errors import UserError
from runner.store.writer import RESULTS_FILE, damaged_message

SHARD_DIR = re.compile(r"shard-(\d+)-of-(\d+)")
"""The name of a shard's folder (`shard_dir_name`)."""

# The tables a merged run is read from, each with its id columns and the id sequence each takes its values from.
# A table a later migration adds is left out of the merge until it is listed here (its ids would collide).
_TABLES: dict[str, dict[str, str]] = {
    "session": {"id": "session"},
    "task": {},
    "rollout": {"id": "rollout", "session": "session"},
    "step": {"rollout_id": "rollout"},
    "llm_call": {"rollout_id": "rollout"},
    "evaluation": {"rollout_id": "rollout"},
    "verdict": {"rollout_id": "rollout"},
    "charge": {"id": "charge", "session": "session"},
    "batch": {"id": "batch", "session": "session"},
    "batch_request": {"batch": "batch", "charge": "charge"},
}
_SEQUENCES = {"session": "session", "rollout": "rollout", "charge": "charge", "batch": "batch"}
"""Id sequence -> the table whose `id` it is."""


def shard_dir_name(index: int, count: int) -> str:
    """`shard-I-of-N`: the folder of shard I of N inside the run directory."""
    return f"shard-{index}-of-{count}"


@dataclass(frozen=True, slots=True)
class ShardStores:
    """The shard folders of a run directory that hold a results store."""

    count: int
    """N, the shards the run was split into."""
    dirs: dict[int, Path]
    """Shard index -> its folder, for the shards with a results store."""

    @property
    def missing(self) -> list[tuple[int, int]]:
        """The shards with no results store here (not started, or not copied here yet), as ranges (first, last) in
        order: as many as there are folders, however large N is."""
        ranges, start = [], 1
        for index in (*self.dirs, self.count + 1):  # `dirs` is in shard order
            if index > start:
                ranges.append((start, index - 1))
            start = index + 1
        return ranges

    def missing_names(self) -> dict[int, str]:
        """`missing` by each range's first shard, named `2/3` (one shard) or `4-9/10`."""
        return {first: f"{first}/{self.count}" if first == last else f"{first}-{last}/{self.count}"
                for first, last in self.missing}

    def missing_text(self, most: int = 10) -> str:
        """The first `most` of `missing_names`, and a count of the rest."""
        names = list(self.missing_names().values())
        text = ", ".join(names[:most])
        if len(names) > most:
            shards = sum(last - first + 1 for first, last in self.missing)
            text += f" and {len(names) - most:,} more ranges ({shards:,} shards in all)"
        return text

    def names(self, most: int = 3) -> str:
        """The shard folders' names, the first `most` of them."""
        names = [path.name for path in self.dirs.values()]
        return ", ".join(names[:most]) + (f" and {len(names) - most:,} more" if len(names) > most else "")


def find_shards(run_dir: Path) -> ShardStores | None:
    """The shard stores in `run_dir`, or None when it holds none.

    Raises:
        UserError: shard folders of different counts (`shard-1-of-3` beside `shard-1-of-4`): a run re-split, whose
            stores would count rollouts twice; shard folders beside an unsharded run's store, for the same reason.
    """
    found: dict[int, dict[int, Path]] = {}
    if run_dir.is_dir():
        for child in run_dir.iterdir():
            match = SHARD_DIR.fullmatch(child.name)
            if match and (child / RESULTS_FILE).is_file() and 1 <= int(match[1]) <= int(match[2]):
                found.setdefault(int(match[2]), {})[int(match[1])] = child
    if not found:
        return None
    if len(found) > 1:
        counts = ", ".join(str(count) for count in sorted(found))
        raise UserError(f"{run_dir} holds shards of different counts ({counts}): each count splits the rollouts "
                        "differently, so read one at a time (move the other shard folders elsewhere)")
    count, dirs = found.popitem()
    stores = ShardStores(count, dict(sorted(dirs.items())))
    if (run_dir / RESULTS_FILE).is_file():
        raise UserError(f"{run_dir} holds two runs of the same rollouts: one not sharded ({run_dir / RESULTS_FILE}) "
                        f"and one split {count} ways ({stores.names()}); read one at a time (move the other's files "
                        "into a folder of its own)")
    return stores


def merge_stores(conn: sqlite3.Connection, stores: ShardStores) -> dict[int, tuple[str, int]]:
    """Copies every shard's store into `conn` (an empty database with the results schema, in autocommit mode).

    Returns:
        Each session's (shifted) id -> its shard's folder name and its id in that shard's store (where the shard's
        own files, `sessions.jsonl`, name it).

    Raises:
        UserError: a rollout stored in two shards (a shard folder copied under another name), or a store SQLite
            cannot read (naming it).
    """
    origins: dict[int, tuple[str, int]] = {}
    for path in stores.dirs.values():  # on an error the caller drops the whole database: no rollback needed
        try:
            conn.execute("ATTACH DATABASE ? AS shard", (f"{(path / RESULTS_FILE).resolve().as_uri()}?mode=ro",))
            conn.execute("BEGIN")
            offsets = {sequence: conn.execute(f"SELECT coalesce(max(id), 0) FROM main.{table}").fetchone()[0]
                       for sequence, table in _SEQUENCES.items()}
            for table, remapped in _TABLES.items():
                _copy(conn, table, remapped, offsets)
            conn.execute("COMMIT")
            conn.execute("DETACH DATABASE shard")
        except sqlite3.IntegrityError:
            raise UserError(f"{path}: holds rollouts another shard folder holds too (a shard copied twice?); "
                            "read the shard folders of one run only") from None
        except sqlite3.DatabaseError as exc:
            raise UserError(damaged_message(path / RESULTS_FILE, exc)) from None
        origins |= {shifted: (path.name, shifted - offsets["session"]) for (shifted,) in conn.execute(
            "SELECT id FROM main.session WHERE id > ?", (offsets["session"],))}
    return origins


def _copy(conn: sqlite3.Connection, table: str, remapped: dict[str, str], offsets: dict[str, int]) -> None:
    """Copies `shard.table` into `main.table`, shifting its id columns; columns the shard lacks take their defaults."""
    ours = [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
    theirs = {row[1] for row in conn.execute(f"PRAGMA shard.table_info({table})")}
    if not theirs:
        return  # a table this shard's store predates
    columns = [name for name in ours if name in theirs]
    values = [f"{name} + {offsets[remapped[name]]}" if name in remapped else name for name in columns]
    verb = "INSERT OR IGNORE" if table == "task" else "INSERT"  # every shard saved the run's tasks
    conn.execute(f"{verb} INTO main.{table} ({', '.join(columns)}) SELECT {', '.join(values)} FROM shard.{table}")
