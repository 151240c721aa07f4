"""The downloader every `data fetch` and `prices update` uses: a whole, checked file or a DataError naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from datahome import download, staging
from errors import DataError


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
