"""The downloader every `data fetch` and `prices update` uses: a whole, checked file or a DataError naming it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from datahome import download, staging
from errors import DataError


class Dripping(BaseHTTPRequestHandler):
    """A 1,000-byte body, a byte every 0.2 s (200 s in all; no read ever waits long)."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        try:
            for _ in range(1000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def dripping() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/file"
    finally:
        server.shutdown()
        server.server_close()


def test_a_dripping_download_ends_at_its_deadline(dripping: str, tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(DataError, match="not complete after the 1 s allowed"):
        download(dripping, tmp_path / "got", 30, lambda path, url: None, "the file", deadline=1)
    assert time.monotonic() - started < 5  # the per-read timeout alone (30 s) would have let it run 200 s


def test_a_download_arrives_whole_and_is_checked(file_server: tuple[str, Path], tmp_path: Path) -> None:
    base, served = file_server
    (served / "queries.csv").write_bytes(b"a,b\n" * 100_000)
    seen: list[tuple[Path, str]] = []
    download(f"{base}/queries.csv", tmp_path / "got.csv", 10, lambda path, url: seen.append((path, url)), "queries")
    assert (tmp_path / "got.csv").read_bytes() == (served / "queries.csv").read_bytes()
    assert seen == [(tmp_path / "got.csv", f"{base}/queries.csv")]


def test_failures_name_what_and_where(file_server: tuple[str, Path], tmp_path: Path) -> None:
    base, served = file_server
    with pytest.raises(DataError, match=rf"cannot download the queries from {base}/missing.csv: HTTP 404"):
        download(f"{base}/missing.csv", tmp_path / "got.csv", 10, lambda path, url: None, "the queries")
    (served / "page.html").write_text("<html>")

    def refuse(path: Path, url: str) -> None:
        raise DataError(f"{url}: not a CSV")

    with pytest.raises(DataError, match="page.html: not a CSV"):
        download(f"{base}/page.html", tmp_path / "got.csv", 10, refuse, "the queries")


def test_staging_is_a_hidden_folder_inside_removed_even_after_a_failure(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    with pytest.raises(DataError), staging(home) as folder:
        assert folder.parent == home and folder.name.startswith(".")
        (folder / "partial.csv").write_text("a,b\n")
        raise DataError("the download failed")
    assert home.is_dir() and list(home.iterdir()) == []
