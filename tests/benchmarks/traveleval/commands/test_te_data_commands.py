"""`data fetch|import traveleval` and `data info`: downloads from a local HTTP server serving a copy of the staged
files in the repository's layout, every file checked before anything in the home is replaced."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from benchmarks.traveleval import paths
from benchmarks.traveleval.commands.data import PAPER_TABLE_A1, data_info, fetch_command, holds_data, import_command
from benchmarks.traveleval.commands.manifest import FILES
from errors import DataError, UsageError, UserError
from tests.benchmarks.traveleval.evaluation import plans
from tests.benchmarks.traveleval.sandbox.test_te_sandbox import COUNTS
from tests.runner.engine_support import run_cli

IMPORTS = 4
"""Imports over the data home while `evaluate` reads it."""
QUERIES = {"easy.json": 200, "medium.json": 400, "hard.json": 400, "progressive.json": 150}


def _invoke(command: click.Command, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), catch_exceptions=True)


def _serve_repository(traveleval_data: Path, root: Path) -> None:
    """The official repository's layout: `environment/data/...`, `environment/database/...`."""
    shutil.copytree(traveleval_data, root / "environment")


def _serve_caches(root: Path, geo: bytes, travel_time: bytes, *, pinned: dict[str, bytes] | None = None) -> None:
    """The Gaode caches at `core/...`, and under `pins/` their descriptions at the pinned commit (GitHub's contents
    API shape), made by `git hash-object` from `pinned` (default: what is served)."""
    served = {"core/geo_cache.json": geo, "core/utils/travel_time_cache.json": travel_time}
    for repository_path, content in served.items():
        (root / repository_path).parent.mkdir(parents=True, exist_ok=True)
        (root / repository_path).write_bytes(content)
        official = (pinned or served).get(repository_path, content)
        blob = subprocess.run(["git", "hash-object", "--stdin"], input=official, capture_output=True, check=True)
        pin = root / "pins" / repository_path
        pin.parent.mkdir(parents=True, exist_ok=True)
        pin.write_text(json.dumps({"path": repository_path, "size": len(official), "sha": blob.stdout.decode().strip(),
                                   "type": "file"}), encoding="utf-8")


def _fetch(url: str, home: Path) -> Result:
    return _invoke(fetch_command, "--home", str(home), "--url", url + "/{path}", "--pins-url", url + "/pins/{path}")


def _queries(info: dict[str, Any]) -> dict[str, int]:
    return {name: found["queries"] for name, found in info["queries"].items()}


def test_the_manifest_describes_the_staged_files(traveleval_data: Path) -> None:
    staged = sorted(path.relative_to(traveleval_data).as_posix() for path in traveleval_data.rglob("*")
                    if path.is_file())
    assert sorted(FILES) == staged and len(FILES) == 137
    assert FILES["data/queries/easy.json"][0] == (traveleval_data / "data/queries/easy.json").stat().st_size


def test_fetch_downloads_checks_builds_and_tolerates_absent_caches(
        traveleval_data: Path, file_server: tuple[str, Path], tmp_path: Path) -> None:
    url, root = file_server
    _serve_repository(traveleval_data, root)
    home = tmp_path / "home"
    done = _fetch(url, home)
    assert done.exit_code == 0, done.output
    assert "skipped the Gaode cache geo_cache.json" in done.output and "Gaode caches: none" in done.output
    assert "database: " in done.output and "3,411 attractions" in done.output
    info = data_info(home)
    assert _queries(info) == QUERIES
    assert info["index"]["rows"] == COUNTS and info["amap_cache"] == []
    folder = paths.data_dir(home)
    assert (paths.database_dir(folder) / "intercity_transport/train/from_北京_to_上海.json").read_bytes() == \
        (traveleval_data / "database/intercity_transport/train/from_北京_to_上海.json").read_bytes()
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def test_fetch_keeps_the_gaode_caches_when_served(traveleval_data: Path, file_server: tuple[str, Path],
                                                  tmp_path: Path) -> None:
    url, root = file_server
    _serve_repository(traveleval_data, root)
    _serve_caches(root, json.dumps({"北京站": [116.4, 39.9]}).encode(), b"{}")
    home = tmp_path / "home"
    assert _fetch(url, home).exit_code == 0
    assert data_info(home)["amap_cache"] == ["geo_cache.json", "travel_time_cache.json"]
    cached = paths.amap_cache_dir(paths.data_dir(home)) / "geo_cache.json"
    assert json.loads(cached.read_text(encoding="utf-8")) == {"北京站": [116.4, 39.9]}


def test_a_gaode_cache_that_is_not_the_pinned_commits_is_not_kept(traveleval_data: Path,
                                                                   file_server: tuple[str, Path],
                                                                   tmp_path: Path) -> None:
    """A mirror serving a poisoned geo cache (same size, one coordinate moved) and a cache with no description at the
    pinned commit: both skipped with the reason; the data itself is installed."""
    url, root = file_server
    _serve_repository(traveleval_data, root)
    official = json.dumps({"北京站": [116.4, 39.9]}).encode()
    _serve_caches(root, official.replace(b"116.4", b"116.9"), b"{}", pinned={"core/geo_cache.json": official})
    (root / "pins" / "core" / "utils" / "travel_time_cache.json").unlink()
    home = tmp_path / "home"
    done = _fetch(url, home)
    assert done.exit_code == 0, done.output
    assert "skipped the Gaode cache geo_cache.json" in done.output and "not the official geo_cache.json at commit " \
        "3638d55590ed" in done.output and "git blob" in done.output
    assert "skipped the Gaode cache travel_time_cache.json" in done.output and "HTTP 404" in done.output
    assert data_info(home)["amap_cache"] == [] and data_info(home)["index"]["rows"] == COUNTS


def test_a_tampered_download_replaces_nothing(traveleval_data: Path, file_server: tuple[str, Path],
                                             tmp_path: Path) -> None:
    url, root = file_server
    _serve_repository(traveleval_data, root)
    home = tmp_path / "home"
    assert _fetch(url, home).exit_code == 0
    before = data_info(home)
    poi = root / "environment" / "database" / "poi" / "wuhan" / "poi.json"
    poi.write_bytes(poi.read_bytes().replace(b"30.", b"31.", 1))
    (root / "environment" / "data" / "queries" / "easy.json").unlink()
    failed = _fetch(url, home)
    assert failed.exit_code != 0 and isinstance(failed.exception, DataError)
    assert "HTTP 404" in str(failed.exception) or "not the official database/poi/wuhan/poi.json" in str(
        failed.exception)
    (root / "environment" / "data" / "queries" / "easy.json").write_bytes(
        (traveleval_data / "data" / "queries" / "easy.json").read_bytes())
    failed = _fetch(url, home)
    assert "not the official database/poi/wuhan/poi.json at commit 3638d55590ed" in str(failed.exception)
    assert "sha256" in str(failed.exception)
    assert data_info(home) == before
    assert [p.name for p in paths.data_dir(home).iterdir() if p.name.startswith(".")] == []


def test_fetch_offline_is_a_message(tmp_path: Path) -> None:
    failed = _invoke(fetch_command, "--home", str(tmp_path), "--url", "http://127.0.0.1:9/{path}", "--timeout", "5")
    assert isinstance(failed.exception, DataError) and "cannot download" in str(failed.exception)
    assert "tripbench data import DIR" in str(failed.exception)


def test_a_url_without_the_path_placeholder_is_refused(tmp_path: Path) -> None:
    for option in ("--url", "--pins-url"):  # a usage error: exit 2 (README's rule), nothing written
        failed = _invoke(fetch_command, "--home", str(tmp_path), option, "http://127.0.0.1:9/easy.json")
        assert isinstance(failed.exception, UsageError) and failed.exception.exit_code == 2
        assert f"{option} 'http://127.0.0.1:9/easy.json': expected a template with {{path}}" in str(failed.exception)
        assert not (tmp_path / "traveleval").exists()


def test_holds_data(traveleval_data: Path, tmp_path: Path) -> None:
    assert holds_data(traveleval_data)
    repository = tmp_path / "TravelEval"
    (repository / "environment").mkdir(parents=True)
    (repository / "environment" / "database").symlink_to(traveleval_data / "database")
    (repository / "environment" / "data").symlink_to(traveleval_data / "data")
    assert holds_data(repository)
    assert not holds_data(tmp_path / "TravelEval" / "environment" / "database")
    assert not holds_data(traveleval_data.parent / "travelplanner")
    assert not holds_data(traveleval_data.parent / "natural_plan")


def test_import_a_repository_checkout_with_its_caches(traveleval_data: Path, tmp_path: Path) -> None:
    repository = tmp_path / "TravelEval"
    shutil.copytree(traveleval_data, repository / "environment")
    (repository / "core").mkdir()
    (repository / "core" / "geo_cache.json").write_text("{}", encoding="utf-8")
    home = tmp_path / "home"
    done = _invoke(import_command, str(repository), "--home", str(home))
    assert done.exit_code == 0, done.output
    info = data_info(home)
    assert _queries(info) == QUERIES and info["index"]["rows"] == COUNTS and info["amap_cache"] == ["geo_cache.json"]


def test_import_refuses_a_bad_row_and_leaves_the_home(traveleval_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _invoke(import_command, str(traveleval_data), "--home", str(home)).exit_code == 0
    before = data_info(home)
    broken = Path(shutil.copytree(traveleval_data, tmp_path / "broken"))
    attractions = broken / "database" / "attractions" / "beijing" / "attractions.csv"
    attractions.write_text(attractions.read_text(encoding="utf-8-sig").replace(",503,", ",free,"), encoding="utf-8")
    failed = _invoke(import_command, str(broken), "--home", str(home))
    assert isinstance(failed.exception, DataError) and "line 2: price: expected a number" in str(failed.exception)
    assert data_info(home) == before


def test_import_of_something_else_names_the_layout(tmp_path: Path) -> None:
    failed = _invoke(import_command, str(tmp_path), "--home", str(tmp_path / "home"))
    assert isinstance(failed.exception, UserError) and "no TravelEval data here" in str(failed.exception)


def test_info_of_an_empty_home_creates_nothing(tmp_path: Path) -> None:
    info = data_info(tmp_path / "home")
    assert info == {"folder": str(tmp_path / "home" / "traveleval"), "queries": {}, "database": None, "index": None,
                    "amap_cache": [], "queries_by_days": {}, "paper_table_a1": PAPER_TABLE_A1}
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("name", ["easy.json", "progressive.json"])
def test_info_counts_a_malformed_query_file_as_an_error(traveleval_data: Path, tmp_path: Path, name: str) -> None:
    folder = paths.queries_dir(paths.data_dir(tmp_path))
    folder.mkdir(parents=True)
    (folder / name).write_text("{", encoding="utf-8")
    assert "not a readable JSON file" in data_info(tmp_path)["queries"][name]["error"]


@pytest.mark.parametrize(("special", "said"), [
    ("device", "extra.json: a character device, not a file: not imported"),
    ("fifo", "extra.json: a FIFO, not a file: not imported"),
    ("folder link", "loop: a link to a folder: not followed"),
])
def test_import_copies_files_only_never_a_device_a_fifo_or_a_linked_folder(traveleval_data: Path, tmp_path: Path,
                                                                            special: str, said: str) -> None:
    """A link to /dev/zero once wrote 5 GB in 10 s; a FIFO would wait for ever; a folder linking to itself loops."""
    source = Path(shutil.copytree(traveleval_data, tmp_path / "source"))
    extra = source / "database" / "poi" / "extra.json"
    if special == "device":
        extra.symlink_to("/dev/zero")
    elif special == "fifo":
        os.mkfifo(extra)
    else:
        (source / "database" / "loop").symlink_to(source / "database", target_is_directory=True)
    done = run_cli("data", "import", str(source), "--home", str(tmp_path / "home"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr
    assert not paths.database_dir(paths.data_dir(tmp_path / "home")).exists()  # nothing installed


def test_evaluate_beside_a_running_import_never_finds_the_data_home_half_replaced(traveleval_data: Path,
                                                                                  tmp_path: Path) -> None:
    """`data import` over a data home that runs and `evaluate` are reading: each finds the old data or the new."""
    home = tmp_path / "home"
    assert run_cli("data", "import", str(traveleval_data), "--home", str(home)).returncode == 0
    submission = tmp_path / "plans.jsonl"
    submission.write_text(json.dumps({**plans.plan(), "query_uid": "T0201"}, ensure_ascii=False) + "\n",
                          encoding="utf-8")
    source = Path(shutil.copytree(traveleval_data, tmp_path / "source"))

    def fresh_import() -> subprocess.CompletedProcess[str]:
        for path in source.rglob("*"):  # a fresh download: every file newer than the index the home holds
            os.utime(path)
        return run_cli("data", "import", str(source), "--home", str(home))
    with ThreadPoolExecutor(1) as pool:
        imports = pool.submit(lambda: [fresh_import() for _ in range(IMPORTS)])
        scored: list[subprocess.CompletedProcess[str]] = []
        while not imports.done() or not scored:
            scored.append(run_cli("evaluate", str(submission), "--benchmark", "traveleval", "--json", "--home",
                                  str(home)))
    failed = [done.stderr for done in scored if done.returncode != 0]
    print(f"\n{len(scored)} evaluations beside {IMPORTS} imports: {len(failed)} failed")
    assert [done.returncode for done in imports.result()] == [0] * IMPORTS
    assert failed == []


def test_fetch_bounds_each_file_to_its_manifest_size_and_reads_hostile_caches_as_errors(
        traveleval_data: Path, file_server: tuple[str, Path], tmp_path: Path) -> None:
    """A file the manifest says is some kB, served as 20 MB, is refused as it arrives; a Gaode cache nested 100,000
    deep or holding a 5,000-digit number is skipped with the reason, never a traceback."""
    url, root = file_server
    _serve_repository(traveleval_data, root)
    _serve_caches(root, b"[" * 100_000, b'{"a": ' + b"9" * 5000 + b"}")
    home = tmp_path / "home"
    done = run_cli("data", "fetch", "traveleval", "--home", str(home), "--url", url + "/{path}", "--pins-url",
                   url + "/pins/{path}")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "skipped the Gaode cache geo_cache.json" in done.stderr and "RecursionError" in done.stderr
    assert "skipped the Gaode cache travel_time_cache.json" in done.stderr and "4300" in done.stderr
    categories = root / "environment" / "database" / "categories.json"
    size = FILES["database/categories.json"][0]
    categories.write_bytes(b" " * 20_000_000)
    failed = run_cli("data", "fetch", "traveleval", "--home", str(home), "--url", url + "/{path}", "--pins-url",
                     url + "/pins/{path}")
    assert failed.returncode == 1 and f"more than {size:,} bytes" in failed.stderr, failed.stderr


def test_a_staging_folder_a_killed_import_left_is_removed_by_the_next(traveleval_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    left = paths.data_dir(home) / f".staging-{_dead_pid()}-x1y2"
    (left / "database").mkdir(parents=True)
    (left / "database" / "big.csv").write_bytes(b"0" * 1000)
    info = run_cli("data", "info", "--json", "--home", str(home))  # said before it goes
    assert json.loads(info.stdout)["stale_staging"] == {str(left): 1000}
    assert f"left by a killed fetch or import: {left} (1,000 bytes" in run_cli("data", "info", "--home",
                                                                               str(home)).stdout
    done = run_cli("data", "import", str(traveleval_data), "--home", str(home))
    assert done.returncode == 0, done.stderr
    assert not left.exists() and f"removed {left} (1,000 bytes)" in done.stderr
    assert json.loads(run_cli("data", "info", "--json", "--home", str(home)).stdout)["stale_staging"] == {}


def _dead_pid() -> int:
    """The id of a process that has ended (it names no live one)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
