"""`--shard I/N`: which rollouts of a run one of N processes runs (a SLURM job array, a Kubernetes Indexed Job).

A rollout belongs to the shard picked by the sha256 of its key (its six fields as canonical JSON): the same on every
machine and Python version, whatever the task order, `limit` or the other rollouts of the run (Python's `hash()` of a
string changes per process). Each shard writes its own run directory, `RUN_DIR/shard-I-of-N` (on local disk: SQLite
does not belong on a network file system); `tripbench status` and `report` given RUN_DIR merge them
(`runner.store.shards`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from errors import UsageError
from runner.store.records import RolloutKey
from runner.store.shards import find_shards, shard_dir_name
from runner.store.writer import RESULTS_FILE

MAX_SHARDS = 10_000
"""N of `--shard I/N` at most: far past any job array (SLURM's default MaxArraySize is 1001), and what keeps the
shards' folders, claims and `status` lines few."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard `index` of `count` (1-based, as SLURM's `--array=1-N` and the command line count)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count <= MAX_SHARDS:
            raise ValueError(f"a shard I/N with 1 <= I <= N <= {MAX_SHARDS} (at most {MAX_SHARDS:,} shards), "
                             f"got {self}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: RolloutKey) -> bool:
        """Whether `key` is this shard's rollout."""
        return shard_of(key, self.count) == self.index

    def select(self, keys: Sequence[RolloutKey]) -> list[RolloutKey]:
        """This shard's keys, in the run's order."""
        return [key for key in keys if self.owns(key)]

    def run_dir(self, parent: Path) -> Path:
        """Where this shard's results go: `PARENT/shard-I-of-N`."""
        return parent / shard_dir_name(self.index, self.count)


_SHARD = re.compile(r"\s*(\d{1,100})\s*/\s*(\d{1,100})\s*")  # int() of thousands of digits is refused


def parse_shard(text: str) -> Shard:
    """`"2/3"` -> Shard(2, 3).

    Raises:
        ValueError: anything but I/N with 1 <= I <= N <= MAX_SHARDS, saying so.
    """
    match = _SHARD.fullmatch(text)
    if match is None:
        raise ValueError(f"I/N (e.g. 2/3: the second of three shards), got {text!r}")
    return Shard(int(match[1]), int(match[2]))


def shard_of(key: RolloutKey, count: int) -> int:
    """The shard (1..count) a rollout key belongs to: sha256 of the key's fields as canonical JSON, modulo `count`."""
    fields = [key.benchmark, key.split, key.task, key.model, key.strategy, key.sample]
    digest = hashlib.sha256(orjson.dumps(fields)).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def check_run_dir(run_dir: Path, shard: Shard | None) -> None:
    """Refuses to start a run in `run_dir` (the folder given: a sharded run's parent) when it holds the same rollouts
    split another way: an unsharded run's store beside shards, or shards of another count. Each would run its
    rollouts a second time, and `status` and `report` of the folder could read only one of them.

    Raises:
        UsageError: naming what the folder holds and how to go on.
    """
    stores = find_shards(run_dir)  # UserError: shards of two counts there already
    if shard is None:
        if stores is not None:
            raise UsageError(f"{run_dir} holds the shards of a run split {stores.count} ways ({stores.names()}): a "
                             "run without --shard would run their rollouts again beside them; run each with --shard "
                             f"I/{stores.count}, or give this run a --run-dir of its own")
        return
    if (run_dir / RESULTS_FILE).is_file():
        raise UsageError(f"--shard {shard}: {run_dir} holds a run that is not sharded ({run_dir / RESULTS_FILE}): "
                         "its rollouts would run again in the shards beside it; resume it without --shard, or give "
                         "the sharded run a --run-dir of its own")
    if stores is not None and stores.count != shard.count:
        raise UsageError(f"--shard {shard}: {run_dir} holds the shards of a run split {stores.count} ways "
                         f"({stores.names()}): {shard.count} shards split the rollouts differently and would run "
                         f"them again; run --shard I/{stores.count}, or give this run a --run-dir of its own")
