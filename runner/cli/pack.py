"""`tripbench pack RUN_DIR` (a run in one file, with exactly the cache entries its rollouts used) and `tripbench
replay FILE` (re-execute it anywhere, no key, no network, no cache folder, and prove the same numbers).

The file format is `runner.store.pack`'s (docs/pack-format.md)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from benchmarks.registry import get_benchmark
from cache.modes import CacheMode
from cache.store import CacheEntry, CacheStore
from datahome import default_cache_dir
from errors import UsageError, UserError
from reports.build import build_report
from runner.engine.execute import execute
from runner.engine.identity import identity_of
from runner.engine.prepared import prepare
from runner.engine.spec import RunSpec, parse_options
from runner.store.outputs import OUTPUTS, write_merged_outputs
from runner.store.pack import Pack, open_pack, pack_digest, write_pack
from runner.store.provenance import IDENTITY_FILE, SESSIONS_FILE, provenance, spec_digest
from runner.store.records import RolloutKey
from runner.store.results import RunResults, load_run
from runner.store.writer import RESULTS_FILE

SPECS = "specs.json"
"""In a pack: the distinct specs of the run's sessions, in order (the first made the run, the others extended it)."""
NOT_COMPARED = frozenset({"runs", "cost", "submissions", "provenance"})
"""Report tables that differ between a run and its replay by nature: folders, dates, money (a replay spends none)."""
GROUPS_COMPARED = "compare_"
"""The prefix of the tables comparing a run's groups with each other (`tripbench report` of several groups): they name
the run's folder and carry money and time; what they are computed from, the rollouts, is compared itself."""
PAID = frozenset({"cache_hits", "cost_usd"})
"""Fields of output rows that say what a rollout paid, which its replay (every call a hit, $0) does not repeat."""
OUTPUT_DIGESTS = "outputs.json"
"""In a pack: the sha256 of each file of the run's outputs/ folder (the files are written again from the results
store on replay, not packed)."""
QUERIES = "queries"
"""In a pack, and in its replay's run directory: the query file of a run made with `queries = FILE` (and the data
files beside it the run read)."""
ENTRIES_AT_ONCE = 500
"""Cache entries a replay holds whole at a time, as it stores them (each has its prompts in full)."""
SHOWN = 20
"""Differences listed at most."""


@click.command("pack")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--out", type=click.Path(path_type=Path, dir_okay=False),
              help="The pack file (default: RUN_DIR.tbpack).")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where the run's cache is, when not where its spec said (a team run reads the team database).")
def pack_command(run_dir: Path, out: Path | None, cache_dir: Path | None) -> None:
    """Write a run into one file: its spec and identity, provenance, results and exactly the cache entries its
    rollouts used, compressed, every part under a sha256 (`tripbench replay FILE` re-executes it for $0)."""
    out = out or run_dir.with_name(f"{run_dir.name}.tbpack")
    started = time.monotonic()
    with load_run(run_dir) as results:
        if not results.sessions:
            raise UsageError(f"{run_dir}: no session yet: nothing to pack")
        # in the order the rollouts made them: an agent's next call resends the last one's history (compresses better)
        keys = list(dict.fromkeys(stored.call.cache_key for stored in results.calls() if stored.call.cache_key))
        specs = _distinct_specs(results)
        files = {SPECS: json.dumps(specs, indent=1).encode(),
                 "provenance.json": json.dumps(provenance(results), indent=1).encode(),
                 OUTPUT_DIGESTS: json.dumps({name: _sha(data) for name, data in _files(run_dir / OUTPUTS).items()},
                                            indent=1).encode()}
        spec, spec_path = RunSpec.model_validate(results.sessions[-1].spec_json), results.sessions[-1].spec_path
        files |= _query_files(results, json.loads((run_dir / IDENTITY_FILE).read_bytes()).get("data", {})
                              if (run_dir / IDENTITY_FILE).is_file() else {})
    for name in (IDENTITY_FILE, SESSIONS_FILE):
        if (run_dir / name).is_file():
            files[name] = (run_dir / name).read_bytes()
    with _run_cache(spec, spec_path, cache_dir) as (cache, where):
        entries = _entries(cache, keys, where)
        stats = write_pack(out, {"run": run_dir.name, "benchmark": spec.benchmark}, files,
                           _store_bytes(run_dir / RESULTS_FILE), entries)
    folder = _size(where) if isinstance(where, Path) else None
    ratio = f" (the cache folder holds {folder:,} bytes: {folder / stats.size:,.0f}x larger)" if folder else ""
    click.echo(f"{out}: {stats.entries:,} cache entries and {stats.files} files in {stats.size:,} bytes{ratio}, "
               f"packed in {time.monotonic() - started:.1f} s; replay it with: tripbench replay {out}")


@click.command("replay")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--run-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where the replay's run goes (default: <run>-replay beside FILE); a new or empty folder.")
@click.option("--info", is_flag=True, help="Print the pack's provenance and run nothing.")
def replay_command(file: Path, run_dir: Path | None, info: bool) -> None:
    """Re-execute every rollout of a pack with every call answered from the pack alone (no API key, no network, no
    cache folder), then compare with the pack's results: exit 0 when identical, 1 listing the differences.

    A pack altered anywhere is refused before anything runs, and so is data whose sha256 differs from the pack's."""
    started = time.monotonic()
    with open_pack(file) as pack:
        facts = json.loads(pack.file("provenance.json") or b"{}")
        if info:
            click.echo(json.dumps({"pack": str(file), "format_version": pack.meta.get("format_version"),
                                   **facts}, indent=1, ensure_ascii=False))
            return
        run_dir = run_dir or file.with_name(f"{pack.meta.get('run', file.stem)}-replay")
        if run_dir.exists() and any(run_dir.iterdir()):
            raise UsageError(f"{run_dir}: not empty: give --run-dir a new or empty folder")
        specs = json.loads(pack.file(SPECS) or b"[]")
        identity = json.loads(pack.file(IDENTITY_FILE) or b"{}")
        with tempfile.TemporaryDirectory(prefix="tripbench-replay-") as scratch:
            cache_dir, original = Path(scratch) / "cache", Path(scratch) / "original"
            prepared = _checked_specs(pack, specs, run_dir, cache_dir, identity.get("data", {}),
                                      facts.get("benchmark") or "BENCHMARK")
            with CacheStore(cache_dir) as cache:
                batch: dict[str, CacheEntry] = {}
                for key, data in pack.entries():  # a few at a time: whole again, a run's prompts are large
                    batch[key] = CacheEntry.from_json(orjson.loads(data))
                    if len(batch) == ENTRIES_AT_ONCE:
                        cache.set_many(batch)
                        batch.clear()
                cache.set_many(batch)
            differences = _original(pack, original)
            run_dir.mkdir(parents=True, exist_ok=True)
            for position, one in enumerate(prepared):
                asyncio.run(execute(one, run_dir, extend=position > 0, show_progress=False))
            found, rollouts = compare_runs(original, run_dir)
            differences += found
    took = f"replayed in {time.monotonic() - started:.1f} s into {run_dir}"
    if differences:
        listed = "\n".join(f"  {difference}" for difference in differences[:SHOWN])
        more = f"\n  and {len(differences) - SHOWN} more" if len(differences) > SHOWN else ""
        click.echo(f"different: {len(differences)} differences ({took}):\n{listed}{more}")
        raise SystemExit(1)
    click.echo(f"identical: {rollouts}/{rollouts} rollouts, every table equal ({took})")


def _checked_specs(pack: Pack, specs: list[dict[str, Any]], run_dir: Path, cache_dir: Path, data: dict[str, str],
                   benchmark: str) -> list[Any]:
    """The pack's specs prepared to replay into `run_dir` (a run made with `queries = FILE` reads the pack's copy,
    written into RUN_DIR/queries), this machine's data checked against the packed run's.

    Raises:
        UsageError: the data differs (`_check_data`): nothing is left in `run_dir`.
    """
    queries = [name for name in pack.names() if name.startswith(f"{QUERIES}/")]
    made = not run_dir.exists()
    try:
        for name in queries:
            (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (run_dir / name).write_bytes(pack.file(name) or b"")
        digest = pack_digest(pack.path)
        prepared = [_prepared(spec, run_dir, cache_dir, digest) for spec in specs]
        _check_data(prepared[0], data, benchmark)
    except UserError:
        shutil.rmtree(run_dir if made else run_dir / QUERIES, ignore_errors=True)
        raise
    return prepared


def _query_files(results: RunResults, data: dict[str, str]) -> dict[str, bytes]:
    """The files of a run made with `queries = FILE` (a user's own), as a pack holds them (`queries/NAME`): the file
    and the data files beside it that the run read (a benchmark's companion file of the queries), by the names the
    run's identity gives them, each checked against its sha256 there.

    Raises:
        UsageError: a file changed or gone since the run read it (a replay of it would not be this run's).
    """
    found: dict[str, bytes] = {}
    for session in results.sessions:
        if not isinstance(queries := session.spec_json.get("queries"), str):
            continue
        path = Path(session.spec_path or ".").parent / queries
        if not path.is_file():
            raise UsageError(f"{path}: the run's query file (queries = in its spec) is not there: put it back to "
                             "pack the run")
        content, known = path.read_bytes(), data.get(path.name)  # known: None for a run made before identities
        if known is not None and _sha(content) != known:
            raise UsageError(f"{path}: changed since the run read it (its sha256 is not the one in the run's "
                             "identity.json): put back the file the run read to pack the run")
        found[f"{QUERIES}/{path.name}"] = content
        for name, digest in data.items():  # another file it read there: only the very one (its sha256 the same)
            if (beside := path.parent / name).is_file() and _sha(other := beside.read_bytes()) == digest:
                found[f"{QUERIES}/{name}"] = other
    return found


def _original(pack: Pack, original: Path) -> list[str]:
    """Writes the packed run into `original`: its results store, and its output files (a version 1 pack holds them;
    a newer one only their digests: they are written again from the store, and any that differs from the run's
    is a difference)."""
    original.mkdir()
    (original / RESULTS_FILE).write_bytes(pack.store() or b"")
    if pack.version == 1:
        for name in pack.names():
            if name.startswith(f"{OUTPUTS}/"):
                (original / name).parent.mkdir(parents=True, exist_ok=True)
                (original / name).write_bytes(pack.file(name) or b"")
        return []
    with load_run(original) as results:
        write_merged_outputs(results)
    written = {name: _sha(data) for name, data in _files(original / OUTPUTS).items()}
    packed: dict[str, str] = json.loads(pack.file(OUTPUT_DIGESTS) or b"{}")
    return [f"output file {OUTPUTS}/{name}: written again from the pack's results store, it differs from the "
            "packed run's" for name in sorted(packed.keys() | written.keys()) if packed.get(name) != written.get(name)]


def compare_runs(original: Path, replayed: Path) -> tuple[list[str], int]:
    """The differences between a run and its replay (rollouts, answers, plans, verdicts, output files, report
    tables), and the number of rollouts of the original."""
    differences: list[str] = []
    with load_run(original) as before, load_run(replayed) as after:
        was, now = _outcomes(before), _outcomes(after)
        for key in sorted(was.keys() | now.keys(), key=str):
            if key not in now:
                differences.append(f"rollout {key}: not replayed")
            elif key not in was:
                differences.append(f"rollout {key}: not in the pack")
            elif was[key] != now[key]:
                fields = [name for name, a, b in zip(("status", "answer", "plan", "verdicts"), was[key], now[key],
                                                     strict=True) if a != b]
                differences.append(f"rollout {key}: {', '.join(fields)} differ")
        count = len(before.rollouts)
    files = [_files(original / OUTPUTS), _files(replayed / OUTPUTS)]
    for name in sorted(files[0].keys() | files[1].keys()):
        if _unpaid(files[0].get(name)) != _unpaid(files[1].get(name)):
            differences.append(f"output file {OUTPUTS}/{name} differs")
    tables = [{table.name: table.rows for table in build_report([run]).tables()
               if table.name not in NOT_COMPARED and not table.name.startswith(GROUPS_COMPARED)}
              for run in (original, replayed)]
    for name in sorted(tables[0].keys() | tables[1].keys()):
        if tables[0].get(name) != tables[1].get(name):
            differences.append(f"report table {name} differs")
    return differences, count


def _outcomes(results: RunResults) -> dict[RolloutKey, tuple[Any, ...]]:
    modes = {mode: results.evaluations(mode) for mode in _modes(results)}
    return {r.key: (r.status, r.answer, r.plan, {mode: by_id.get(r.id) for mode, by_id in modes.items()})
            for r in results.rollouts}


def _modes(results: RunResults) -> list[str]:
    return list(dict.fromkeys(mode for session in results.sessions for mode in session.spec.evaluate))


def _files(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()} if folder.is_dir() else {}


def _unpaid(data: bytes | None) -> object:
    """An output file as compared: a JSON-lines file's rows without what a replay pays differently (cache hits,
    cost); any other file as it is."""
    if data is None:
        return None
    try:
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
    except ValueError:
        return data
    return [{k: v for k, v in row.items() if k not in PAID} if isinstance(row, dict) else row for row in rows]


def _distinct_specs(results: RunResults) -> list[dict[str, Any]]:
    """Each spec the run's sessions ran, once, in order."""
    seen: dict[str, dict[str, Any]] = {}
    for session in results.sessions:
        seen.setdefault(spec_digest(session.spec_json), session.spec_json)
    return list(seen.values())


def _store_bytes(path: Path) -> bytes:
    """A consistent copy of a results store (SQLite's backup: a run still writing is copied as of one moment)."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / RESULTS_FILE
        source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        return copy.read_bytes()


@contextlib.contextmanager
def _run_cache(spec: RunSpec, spec_path: str | None, cache_dir: Path | None) -> Iterator[tuple[Any, Path | str]]:
    """The cache the run used: the team database's, else `cache_dir`, else the spec's folder's or the default."""
    if spec.team is not None and cache_dir is None:
        from runner.team import TeamCache, team_url

        team = TeamCache(team_url(spec.team.url_env, "the run's spec"))
        try:
            yield team, team.location
        finally:
            team.close()
        return
    folder = cache_dir or ((Path(spec_path or ".").parent / spec.cache_dir) if spec.cache_dir
                           else default_cache_dir())
    if not folder.is_dir():
        raise UsageError(f"{folder}: no cache folder there (the run's spec names it): give --cache-dir")
    with CacheStore(folder) as cache:
        yield cache, folder


def _entries(cache: Any, keys: list[str], where: Path | str) -> list[tuple[str, bytes]]:
    """The stored entries of `keys`, as the JSON the cache stores.

    Raises:
        UserError: some are not in the cache (the pack could not replay those calls).
    """
    found: dict[str, CacheEntry] = {}
    if isinstance(cache, CacheStore):  # its entries whole (a compact entry's fields rebuilt from its chunks)
        found = cache.peek_many(keys, fields=True)
    for start in range(0, len(keys), 500) if not isinstance(cache, CacheStore) else ():
        found.update(cache.get_many(keys[start:start + 500]))
    if missing := [key for key in keys if key not in found]:
        raise UserError(f"{where}: {len(missing)} of the {len(keys)} answers the run's rollouts used are not in "
                        f"this cache (first: {missing[0]}): a pack without them could not replay; give --cache-dir")
    return [(key, orjson.dumps(found[key].stored())) for key in keys]


def _prepared(spec: dict[str, Any], run_dir: Path, cache_dir: Path, digest: str) -> Any:
    """A spec of the pack, prepared to run from the pack's answers alone: cache mode replay, its cache the pack's,
    no team, and the benchmark's data where this machine keeps it (folders named in options were the packer's)."""
    parsed = RunSpec.model_validate(spec)
    read = parse_options(get_benchmark(parsed.benchmark).options_model, parsed.options, "the pack's spec")
    options = {name: value for name, value in parsed.options.items() if not isinstance(getattr(read, name, None), Path)}
    queries = {} if parsed.queries is None else {"queries": f"{QUERIES}/{Path(parsed.queries).name}"}
    replay = parsed.model_copy(update={"cache": CacheMode.REPLAY, "cache_dir": str(cache_dir), "team": None,
                                       "options": options, "processes": 1, **queries})
    prepared = prepare(run_dir / "spec.toml", spec=replay)
    prepared.replay_of = digest
    return prepared


def _check_data(prepared: Any, packed: dict[str, str], benchmark: str) -> None:
    """Refuses data whose sha256 differs from the data the pack's run read, naming each file.

    Raises:
        UsageError: naming the files and how to get the data the run read.
    """
    here = dict(identity_of(prepared).data)
    wrong = [name for name in sorted(packed.keys() | here.keys()) if packed.get(name) != here.get(name)]
    if wrong:
        shown = "; ".join(f"{name}: sha256 {str(packed.get(name))[:12]}… in the pack, "
                          f"{str(here.get(name, 'absent'))[:12]}… here" for name in wrong)
        raise UsageError(f"this machine's {benchmark} data differs from the data the packed run read ({shown}): "
                         f"install the data it used (`tripbench data fetch {benchmark}`, or `tripbench data import "
                         "DIR` with the same files); nothing ran")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())

