"""Where TravelEval's data lives in the data home: `<home>/traveleval/`, in the official `environment/` layout.

    traveleval/
      data/queries/{easy,medium,hard,progressive}.json
      database/{attractions,accommodations,restaurants,poi,intercity_transport,transportation}/…, categories.json
      traveleval.sqlite        the sandbox index built from database/ (`sandbox.build.ensure_index`)
      amap_cache/              the official Gaode caches, when fetched: geo_cache.json, travel_time_cache.json
"""

from __future__ import annotations

from pathlib import Path

from datahome import default_home

QUERY_FILES = ("easy.json", "medium.json", "hard.json", "progressive.json")
AMAP_CACHE_FILES = ("geo_cache.json", "travel_time_cache.json")


def data_dir(home: Path | None = None) -> Path:
    """TravelEval's folder in the data home (`home`, else `default_home()`)."""
    return (home or default_home()) / "traveleval"


def queries_dir(folder: Path) -> Path:
    return folder / "data" / "queries"


def database_dir(folder: Path) -> Path:
    return folder / "database"


def index_path(folder: Path) -> Path:
    return folder / "traveleval.sqlite"


def amap_cache_dir(folder: Path) -> Path:
    return folder / "amap_cache"
