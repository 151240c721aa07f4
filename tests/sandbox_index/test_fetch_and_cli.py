"""`tripbench data fetch` against a real local HTTP server, and the `data` commands end to end."""

from __future__ import annotations

import functools
import json
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from errors import DataError
from runner.cli.main import cli
from sandbox_index import open_sandbox, travelplanner_index_path
from sandbox_index.fetch import fetch_travelplanner
from tests.runner.engine_support import run_cli

SPLIT_HEADER = "org,dest,days,visiting_city_number,date,people_number,local_constraint,budget,query,level\n"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        if self.path != "/truncated.zip":
            return super().do_GET()
        # the connection drops mid-body: fewer bytes than Content-Length promised
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"PK\x03\x04")
        self.close_connection = True


@pytest.fixture
def server(tmp_path: Path, travelplanner_data: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server (port 0) serving the splits and a zip of the staged database."""
    root = tmp_path / "served"
    root.mkdir()
    for split in ("train", "validation", "test"):
        (root / f"{split}.csv").write_text(
            SPLIT_HEADER + f"Sarasota,Chicago,3,1,\"['2022-03-22']\",1,,1900,a {split} query,easy\n"
        )
    database = travelplanner_data / "database"
    with zipfile.ZipFile(root / "database.zip", "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(database.rglob("*")):
            if path.is_file() and "sources" not in path.parts and path.suffix != ".jsonl":
                bundle.write(path, Path("database") / path.relative_to(database))
    (root / "not-a-zip").write_text("<html>Google Drive can't scan this file</html>")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_fetch_downloads_splits_and_builds_the_index(server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = server
    home = tmp_path / "home"
    summary = fetch_travelplanner(
        home, dataset_url=base + "/{split}.csv", database_url=base + "/database.zip", timeout=10
    )
    for split in ("train", "validation", "test"):
        assert summary.queries[split].read_bytes() == (root / f"{split}.csv").read_bytes()
    assert summary.build.rows["accommodations"] == 4285
    with open_sandbox(travelplanner_index_path(home)) as sandbox:
        assert [row[0] for row in sandbox.flights("St. Petersburg", "Rockford", "2022-03-16").rows] == [
            "F3573659"
        ]
    leftovers = [p.name for p in (home / "travelplanner").iterdir()]
    assert sorted(leftovers) == ["database", "queries"]


@pytest.mark.parametrize(
    ("dataset", "database", "message"),
    [
        ("/missing-{split}.csv", "/database.zip", "HTTP 404"),
        ("/{split}.csv", "/not-a-zip", "not a zip archive"),
        ("/{split}.csv", "/train.csv", "not a zip archive"),
    ],
)
def test_fetch_failures_are_data_errors(
    server: tuple[str, Path], tmp_path: Path, dataset: str, database: str, message: str
) -> None:
    base, _ = server
    home = tmp_path / "home"
    with pytest.raises(DataError, match=message):
        fetch_travelplanner(home, dataset_url=base + dataset, database_url=base + database, timeout=10)
    assert not travelplanner_index_path(home).exists()
    assert not [*home.rglob("*.tmp"), *home.rglob(".staging-*")]


def test_a_split_that_fails_leaves_no_queries_folder(server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = server
    (root / "test.csv").unlink()  # train and validation download, then the test split is a 404
    home = tmp_path / "home"
    with pytest.raises(DataError, match=r"cannot download the test split from .*/test\.csv: HTTP 404"):
        fetch_travelplanner(home, dataset_url=base + "/{split}.csv", database_url=base + "/database.zip", timeout=10)
    assert [p.name for p in home.iterdir()] == []  # no queries/ a later command would take for the data


def test_a_failed_refetch_keeps_the_queries_already_there(server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = server
    queries = tmp_path / "home" / "travelplanner" / "queries"
    queries.mkdir(parents=True)
    (queries / "train.csv").write_text("the earlier train split")
    (queries / "train_ref_routes.jsonl").write_text("the user's own file")
    (root / "validation.csv").unlink()
    with pytest.raises(DataError, match="the validation split"):
        fetch_travelplanner(tmp_path / "home", dataset_url=base + "/{split}.csv", database_url=base + "/database.zip",
                            timeout=10)
    assert sorted(p.name for p in queries.iterdir()) == ["train.csv", "train_ref_routes.jsonl"]
    assert (queries / "train.csv").read_text() == "the earlier train split"


@pytest.mark.parametrize(("database", "message"), [
    ("/missing.zip", r"cannot download the database archive from .*: HTTP 404"),
    ("/truncated.zip", r"cannot download the database archive from .*: the connection closed after 4 of 1,000 bytes"),
])
def test_when_only_the_database_fails_the_splits_are_kept_and_named(server: tuple[str, Path], tmp_path: Path,
                                                                    database: str, message: str) -> None:
    """Google Drive often refuses scripts: the user then imports a database by hand and needs the splits."""
    base, _ = server
    home = tmp_path / "home"
    with pytest.raises(DataError, match=message) as raised:
        fetch_travelplanner(home, dataset_url=base + "/{split}.csv", database_url=base + database, timeout=10)
    queries = home / "travelplanner" / "queries"
    assert str(raised.value).endswith(f"; the query splits are saved in {queries}, the database and index in the "
                                      "data home are as they were")
    assert sorted(p.name for p in queries.iterdir()) == ["test.csv", "train.csv", "validation.csv"]
    assert sorted(p.name for p in home.rglob("*")) == sorted(["travelplanner", "queries", "test.csv", "train.csv",
                                                              "validation.csv"])


def test_a_bad_archive_never_replaces_the_good_database_and_index(server: tuple[str, Path], tmp_path: Path) -> None:
    """A zip bomb (30 MB of zeros in a few kB) and an archive without the official layout: refused before anything in
    the home is replaced, so the database and index fetched before still serve."""
    base, root = server
    home = tmp_path / "home"
    fetched = run_cli("data", "fetch", "--home", str(home), "--dataset-url", base + "/{split}.csv", "--database-url",
                      base + "/database.zip")
    assert fetched.returncode == 0, fetched.stderr
    index = travelplanner_index_path(home)
    before = (index.read_bytes(), sorted(p.name for p in (home / "travelplanner" / "database").rglob("*")))
    with zipfile.ZipFile(root / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("database/flights/clean_Flights_2022.csv", b"0" * 30_000_000)
    with zipfile.ZipFile(root / "other.zip", "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("notes/readme.txt", "no database here")
    for archive, said in (("bomb.zip", "not a database file (a zip bomb?)"), ("other.zip", "official layout")):
        failed = run_cli("data", "fetch", "--home", str(home), "--dataset-url", base + "/{split}.csv",
                         "--database-url", f"{base}/{archive}")
        assert failed.returncode == 1 and said in failed.stderr and "Traceback" not in failed.stderr, failed.stderr
        assert (index.read_bytes(), sorted(p.name for p in (home / "travelplanner" / "database").rglob("*"))) == before
        assert not [*home.rglob(".staging-*")]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_offline_fetch_is_one_line_and_exit_1(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    command = [sys.executable, "-c", "from runner.cli.main import main; main()", "data", "fetch"]
    done = subprocess.run(
        [*command, "--home", str(tmp_path), "--dataset-url", url + "/{split}.csv",
         "--database-url", url + "/db.zip"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "cannot download the train split" in errors[0] and "refused" in errors[0]
    assert "Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == []  # no empty queries/ left behind


def test_cli_import_and_info(travelplanner_data: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    home = tmp_path / "home"
    done = runner.invoke(
        cli, ["data", "import", str(travelplanner_data / "database"), "--home", str(home),
              "--synthetic-flights", "5000", "--seed", "3"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "accommodations: 4,285 rows (762 dropped" in done.output
    assert "synthetic flights: 889 rows" in done.output
    info = runner.invoke(cli, ["data", "info"], env={"TRIPBENCH_HOME": str(home)})
    assert info.exit_code == 0, info.output
    assert "synthetic_flights: 889" in info.output and "rows.flights: 4111" in info.output


def test_cli_info_on_an_empty_home_says_so_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = CliRunner().invoke(cli, ["data", "info", "--home", str(home), "--json"])
    assert done.exit_code == 0, done.output
    info = json.loads(done.output)
    assert info["benchmarks"]["travelplanner"] == {"index": str(home / "travelplanner.sqlite"),
                                                   "index_exists": False, "splits": {}}
    assert info["benchmarks"]["natural-plan"]["files"] == {}
    assert not home.exists()


def test_importing_a_dataset_folder_stages_its_splits(travelplanner_data: Path, tmp_path: Path) -> None:
    """`data import` of a folder holding database/ and queries/ is enough for `evaluate --split train`."""
    home = tmp_path / "home"
    runner = CliRunner()
    done = runner.invoke(cli, ["data", "import", str(travelplanner_data), "--home", str(home)])
    assert done.exit_code == 0, done.output
    queries = home / "travelplanner" / "queries"
    assert sorted(p.name for p in queries.iterdir()) == ["train.jsonl", "validation.jsonl",
                                                         "validation_ref_routes.jsonl"]
    info = json.loads(runner.invoke(cli, ["data", "info", "--json"], env={"TRIPBENCH_HOME": str(home)}).output)
    assert set(info["benchmarks"]["travelplanner"]["splits"]) == {"train", "validation"}
    plans = tmp_path / "plans.jsonl"
    plans.write_text("".join(json.dumps({"idx": n, "plan": None}) + "\n" for n in range(1, 46)))
    scored = runner.invoke(cli, ["evaluate", str(plans), "--split", "train", "--json"],
                           env={"TRIPBENCH_HOME": str(home)})
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["metrics"]["Delivery Rate"] == 0.0
