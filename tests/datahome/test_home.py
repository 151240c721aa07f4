"""The data home and the places in it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from datahome import default_cache_dir, default_home, price_table_path


def test_home_from_env_then_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "explicit"))
    assert default_home() == tmp_path / "explicit"
    monkeypatch.delenv("TRIPBENCH_HOME")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert default_home() == tmp_path / "xdg" / "tripbench"
        monkeypatch.delenv("XDG_DATA_HOME")
        assert default_home() == Path.home() / ".local" / "share" / "tripbench"


def test_the_cache_and_the_price_table_live_in_the_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path))
    assert default_cache_dir() == default_cache_dir(str(tmp_path)) == tmp_path / "cache"
    assert price_table_path() == price_table_path(tmp_path) == tmp_path / "prices.json"
    assert default_cache_dir(tmp_path / "other") == tmp_path / "other" / "cache"
