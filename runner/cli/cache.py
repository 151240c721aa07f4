"""`tripbench cache`: what the LLM call cache holds, why a request hit or missed, and pruning it."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import orjson

from benchmarks.offline import data_home_models, is_offline
from cache import CacheStore, Explanation, explain, key_fields, load_request
from cache.store import DB_FILE, CacheDamaged, CacheUnavailable, corrupt, move_aside
from datahome import default_cache_dir
from errors import MissingInput, UsageError, UserError
from providers.registry import resolve_model
from runner.ladder.gateway import Target

VERIFY_LISTED = 20
"""Bad entries `cache verify` lists one by one (all of them with --json)."""
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_SIZES = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9}

cache_dir_option = click.option(
    "--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Cache directory (default: <data home>/cache; the data home is $TRIPBENCH_HOME or the user data dir).",
)


@contextmanager
def _open(cache_dir: Path | None) -> Iterator[CacheStore]:
    """The cache, as found: a damaged database, found at open or by a read, is reported (with what to do), never
    moved or rebuilt here; one that cannot be used now (locked, a full disk) is left as it is."""
    directory = cache_dir or default_cache_dir()
    if not (directory / DB_FILE).is_file():  # inspecting must not create a cache, in a run folder say
        raise MissingInput(f"no cache at {directory} (no {DB_FILE}): nothing was cached there yet (or pass "
                           "--cache-dir)")
    try:
        with CacheStore(directory, repair=False) as store:
            yield store
    except sqlite3.DatabaseError as exc:
        if not corrupt(exc):
            raise CacheUnavailable(f"{directory / DB_FILE}: the cache cannot be used now ({exc}); it was left as it "
                                   "is: try again once the other process or the disk lets it") from None
        raise CacheDamaged(directory, exc) from None


def _duration(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not match:
        raise UsageError(f"--older-than: expected a duration such as 30d, 12h or 90m, got {text!r}")
    return float(match[1]) * _UNITS[match[2]]


def _size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*", text.lower())
    if not match:
        raise UsageError(f"--max-size: expected a size such as 500MB or 2GB, got {text!r}")
    return int(float(match[1]) * _SIZES[match[2] if match[2] in _SIZES else match[2] + "b"])


def _human(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size} B"


@click.group("cache")
def cache_command() -> None:
    """Inspect and prune the cache of LLM calls."""


@cache_command.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@cache_dir_option
def stats_command(as_json: bool, cache_dir: Path | None) -> None:
    """Entries, size on disk, hits / misses and dollars saved."""
    with _open(cache_dir) as store:
        stats = store.stats()
    if as_json:
        click.echo(orjson.dumps({"cache": str(store.directory), **dataclasses.asdict(stats)},
                                option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(f"cache      {store.directory}")
    lookups = stats.hits + stats.misses
    rate = f" ({stats.hits / lookups:.1%} hits)" if lookups else ""
    click.echo(f"entries    {stats.entries:,}")
    click.echo(f"size       {_human(stats.size_bytes)}")
    click.echo(f"hits       {stats.hits:,}{rate}")
    click.echo(f"misses     {stats.misses:,}")
    click.echo(f"saved      ${stats.saved_usd:,.4f}")


def _target(model: str) -> Target:
    # the offline models with no run behind them: only their identity is needed here
    provider = data_home_models().resolve(model) if is_offline(model) else resolve_model(model)
    if (close := getattr(provider, "aclose", None)) is not None:
        asyncio.run(close())  # only its identity is needed; nothing is sent
    return Target.of(model, provider)


def _render(explanation: Explanation) -> None:
    click.echo(f"key        {explanation.key}")
    click.echo(f"stored     {'yes' if explanation.stored else 'no'}")
    click.echo("fields     " + orjson.dumps(explanation.fields, option=orjson.OPT_SORT_KEYS).decode())
    if explanation.stored:
        return
    if explanation.nearest_key is None or explanation.nearest_fields is None:
        click.echo("nearest    none: the cache is empty")
        return
    click.echo(f"nearest    {explanation.nearest_key}")
    for name in explanation.differing:
        ours, theirs = explanation.fields.get(name), explanation.nearest_fields.get(name)
        click.echo(f"  {name}: this request {orjson.dumps(ours).decode()[:200]}")
        click.echo(f"  {' ' * len(name)}  stored entry {orjson.dumps(theirs).decode()[:200]}")


@cache_command.command("explain")
@click.argument("request_file", type=click.Path(path_type=Path, dir_okay=False), required=False)
@click.option("--key", default=None, help="Show the stored entry of this key (a run's call records its key).")
@cache_dir_option
def explain_command(request_file: Path | None, key: str | None, cache_dir: Path | None) -> None:
    """Which fields made a request's key; else the nearest stored entry and the fields that differ.

    REQUEST_FILE is JSON: {"model": "openai:gpt-4o-mini", "messages": [{"role": "user", "content": "..."}], ...}
    with optional temperature, top_p, max_tokens, stop, seed, sample, extras. Resolving the model needs its API key
    variable to be set, though nothing is sent.
    """
    if (request_file is None) == (key is None):
        raise click.UsageError("give either REQUEST_FILE or --key")
    request = load_request(request_file) if request_file is not None else None
    with _open(cache_dir) as store:
        if request is None:
            assert key is not None
            entry = store.peek(key, fields=True)
            if entry is None:
                raise UserError(f"{key}: no entry in {store.directory}")
            _render(Explanation(key, entry.fields, True, None, None, ()))
            return
        target = _target(request.model)
        fields = key_fields(request, provider=target.provider, resolved_model=target.model_id,
                            endpoint=target.endpoint)
        _render(explain(store, fields))


@cache_command.command("verify")
@click.option("--repair", is_flag=True, help="Drop the bad entries (a damaged database is moved aside).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@cache_dir_option
def verify_command(repair: bool, as_json: bool, cache_dir: Path | None) -> None:
    """Check every entry: readable, and its fields hash to its key (else it would answer another request).

    Exits 1 when bad entries are found and not repaired.
    """
    directory = cache_dir or default_cache_dir()
    damage: dict[str, str] | None = None
    try:
        with _open(directory) as store:
            checked, bad = store.verify(repair=repair)
    except CacheDamaged as exc:  # at open, or a page the scan read: no entry of it can be trusted to be found
        if not repair:
            raise
        damage = {"error": exc.error, "moved_to": str(move_aside(directory))}
        with CacheStore(directory):  # the fresh cache, started now: a run finds it sound
            checked, bad = 0, []
    if as_json:
        click.echo(orjson.dumps({"cache": str(directory), "checked": checked, "repaired": repair,
                                 "damaged_database": damage,
                                 "bad": [{"key": b.key, "reason": b.reason, "detail": b.detail} for b in bad]},
                                option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(f"cache      {directory}")
        if damage is not None:
            click.echo(f"database   damaged ({damage['error']}): moved to {damage['moved_to']} and a fresh cache "
                       "started; the calls it held will be paid again (delete the damaged copy when you no longer "
                       "need it)")
        click.echo(f"checked    {checked:,} entries")
        reasons = Counter(b.reason for b in bad)
        click.echo("bad        " + (", ".join(f"{n:,} {reason}" for reason, n in reasons.most_common()) or "none"))
        for item in bad[:VERIFY_LISTED]:
            click.echo(f"  {item.key}  {item.reason}: {item.detail}")
        if len(bad) > VERIFY_LISTED:
            click.echo(f"  ... and {len(bad) - VERIFY_LISTED:,} more (--json lists them all)")
        if bad:
            click.echo(f"{'dropped' if repair else 'to drop them: tripbench cache verify --repair'}")
    if bad and not repair:
        click.get_current_context().exit(1)


@cache_command.command("prune")
@click.option("--older-than", default=None, help="Delete entries older than this (30d, 12h, 90m).")
@click.option("--max-size", default=None, help="Then delete the oldest entries until the cache fits (500MB, 2GB).")
@cache_dir_option
def prune_command(older_than: str | None, max_size: str | None, cache_dir: Path | None) -> None:
    """Delete old entries, or the oldest until the cache fits a size."""
    if older_than is None and max_size is None:
        raise click.UsageError("give --older-than, --max-size or both")
    older_than_s = _duration(older_than) if older_than is not None else None
    max_bytes = _size(max_size) if max_size is not None else None
    with _open(cache_dir) as store:
        deleted = store.prune(older_than_s=older_than_s, max_bytes=max_bytes)
        stats = store.stats()
    click.echo(f"deleted {deleted:,} entries; {stats.entries:,} left, {_human(stats.size_bytes)}")
