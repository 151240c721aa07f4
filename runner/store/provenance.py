"""What made a run's numbers, as a reader of a paper needs it: `provenance(results)` gathers it from the run
directory (its identity, its sessions, and the stamp each session leaves in `sessions.jsonl`).

    tripbench       version and git commit (when run from a checkout) of each session
    spec            sha256 of the spec as stored (its canonical JSON, credentials never in it)
    data            sha256 of every data file the run read, and the index schema version
    models          each model's request settings as sent (temperature, max_tokens, extra_body, ...), and the day
                    its provider shuts it down when the price table knows it
    prices          the price table's source (its snapshot date)
    sessions        when each ran, on which machine (host name), how it ended, its cache mode, and whether it was
                    the replay of a pack (`replayed`: any number then came from a pack's answers)
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from errors import UserError
from providers.prices import PriceTable, load_price_table
from runner.store.results import RunResults

IDENTITY_FILE = "identity.json"
"""A run directory's identity (`runner.engine.identity`)."""
SESSIONS_FILE = "sessions.jsonl"
"""One line per session: its machine, tripbench commit, spec digest, cache mode, price table, replayed pack."""
PROVENANCE_FILE = "provenance.json"
"""Beside a report's report.md: the provenance of each run reported."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The folder tripbench runs from: a git checkout when installed from one (`pip install -e`)."""


def spec_digest(spec: Mapping[str, Any]) -> str:
    """sha256 of a stored spec's canonical JSON (sorted keys, no spaces): the same spec, the same digest."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def git_commit() -> str | None:
    """The commit of the checkout tripbench runs from (with `+dirty` when files differ from it); None when it is
    not run from a checkout or git is not there."""
    if not (CHECKOUT / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(CHECKOUT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def stamp_session(run_dir: Path, session: int, spec: Mapping[str, Any], cache_mode: str, prices: PriceTable,
                  replay_of: str | None = None) -> None:
    """Appends this session's stamp to `sessions.jsonl` (`prices`: the table it prices at; `replay_of`: the sha256 of
    the pack it replays)."""
    stamp = {"session": session, "host": socket.gethostname(), "git_commit": git_commit(),
             "spec_sha256": spec_digest(spec), "cache": cache_mode, "prices": prices.source,
             "replay_of": replay_of, "stamped_at": time.time()}
    try:
        with (run_dir / SESSIONS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(stamp, sort_keys=True) + "\n")
    except OSError as exc:
        raise UserError(f"{run_dir / SESSIONS_FILE}: cannot write: {exc.strerror or exc}") from None


def stamps(run_dir: Path) -> dict[int, dict[str, Any]]:
    """Session id -> its stamp (a run made before stamps has none; a torn last line is skipped)."""
    found: dict[int, dict[str, Any]] = {}
    try:
        lines = (run_dir / SESSIONS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            stamp = json.loads(line)
            found[int(stamp["session"])] = stamp
        except (ValueError, KeyError, TypeError):
            continue
    return found


def provenance(results: RunResults, prices: PriceTable | None = None) -> dict[str, Any]:
    """The provenance of a run directory (the module docstring's fields), as JSON values; a sharded run's from its
    shard folders (each holds its identity and its sessions' stamps): its sessions each name their shard, and
    `data_differs_between_shards` lists the data files whose sha256 is not the same in every shard. `prices` says
    when each model is shut down (default: the data home's table, read now, as `tripbench report` reads it)."""
    prices = prices if prices is not None else load_price_table()
    run_dir = results.run_dir
    folders = [run_dir] if results.shards is None else list(results.shards.dirs.values())
    identities = [found for folder in folders if (found := _identity(folder))]
    identity = identities[0] if identities else {}
    stamped = {folder.name: stamps(folder) for folder in folders}
    sessions = []
    for session in results.sessions:
        folder, own = results.origins.get(session.id, (run_dir.name, session.id))
        stamp = stamped.get(folder, {}).get(own, {})
        sessions.append({"session": own, **({"shard": folder} if results.shards is not None else {}),
                         "started": _iso(session.started_at),
                         "ended": _iso(session.ended_at) if session.ended_at else None, "outcome": session.outcome,
                         "tripbench": session.tool_version, "git_commit": stamp.get("git_commit"),
                         "host": stamp.get("host"), "cache": stamp.get("cache", session.spec_json.get("cache")),
                         "prices": stamp.get("prices"), "replay_of": stamp.get("replay_of")})
    data = dict(identity.get("data", {}))
    differing = sorted({name for other in identities for name, digest in other.get("data", {}).items()
                        if data.get(name) != digest})
    schema = data.pop("index schema version", None)
    models: dict[str, Any] = {}
    for part in (part for found in identities for part in found.get("parts", [])):
        for label, settings in part["models"].items():
            retires = price.deprecation_date if (price := prices.price_for(settings["model"])) is not None else None
            models[label] = {**settings, "shut_down_on": retires.isoformat() if retires else None}
    latest = results.sessions[-1] if results.sessions else None
    return {"run": run_dir.name, "tripbench": latest.tool_version if latest else None,
            "git_commit": sessions[-1]["git_commit"] if sessions else None,
            "spec_sha256": spec_digest(latest.spec_json) if latest else None,
            "benchmark": identity.get("benchmark"), "split": identity.get("split"),
            "evaluate": identity.get("evaluate"), "data_sha256": data, "index_schema_version": schema,
            **({"data_differs_between_shards": differing} if results.shards is not None else {}),
            "models": models, "price_table": sessions[-1]["prices"] if sessions else None,
            "cache": sessions[-1]["cache"] if sessions else None,
            "replayed": any(session["replay_of"] for session in sessions), "sessions": sessions}


def _identity(run_dir: Path) -> dict[str, Any]:
    try:
        found = json.loads((run_dir / IDENTITY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")
