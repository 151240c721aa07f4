"""TravelEval's data commands through the real CLI (`tripbench data fetch|import|info`), in a subprocess."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from tests.benchmarks.traveleval.sandbox.test_te_sandbox import COUNTS
from tests.runner.engine_support import run_cli


def test_fetch_info_and_a_bad_download_through_the_cli(traveleval_data: Path, file_server: tuple[str, Path],
                                                       tmp_path: Path) -> None:
    url, root = file_server
    shutil.copytree(traveleval_data, root / "environment")
    home = tmp_path / "home"
    done = run_cli("data", "fetch", "traveleval", "--home", str(home), "--url", url + "/{path}",
                   "--pins-url", url + "/pins/{path}")
    assert done.returncode == 0, done.stderr
    assert f"hard.json: {home / 'traveleval' / 'data' / 'queries' / 'hard.json'} (400 queries)" in done.stdout
    info = json.loads(run_cli("data", "info", "--home", str(home), "--json").stdout)["benchmarks"]["traveleval"]
    assert info["index"]["rows"] == COUNTS
    assert {name: found["queries"] for name, found in info["queries"].items()} == {
        "easy.json": 200, "medium.json": 400, "hard.json": 400, "progressive.json": 150}
    # the paper's Table A1 as printed, beside the released data's own distribution, which differs
    assert info["paper_table_a1"]["easy"] == {"2": 20, "3": 30, "4": 40, "5": 40, "6": 30, "7": 40, "total": 200}
    assert info["paper_table_a1"]["progressive"]["total"] == 150
    # the released data's queries by tier and trip length, counted here from the files themselves
    queries = traveleval_data / "data" / "queries"
    expected: dict[str, Counter[str]] = {}
    for tier in ("easy", "medium", "hard"):
        records = json.loads((queries / f"{tier}.json").read_text(encoding="utf-8"))["queries"]
        expected[tier] = Counter(str(query["days"]) for query in records)
    for group in json.loads((queries / "progressive.json").read_text(encoding="utf-8"))["query_groups"]:
        for step, query in enumerate(group, start=1):
            expected.setdefault(f"progressive-{step}", Counter())[str(query["days"])] += 1
    expected["all"] = sum(expected.values(), Counter())
    table = info["queries_by_days"]
    assert list(table) == ["easy", "medium", "hard", "progressive-1", "progressive-2", "progressive-3", "all"]
    assert {row: {days: n for days, n in counts.items() if days != "total"} for row, counts in table.items()} == {
        row: dict(counts) for row, counts in expected.items()}
    assert table["all"]["total"] == 1150 and list(table["all"]) == ["2", "3", "4", "5", "6", "7", "total"]
    categories = root / "environment" / "database" / "categories.json"
    original = categories.read_bytes()
    categories.write_bytes(original[:-1] + (b"\n" if original[-1:] != b"\n" else b" "))  # same size, other bytes
    done = run_cli("data", "fetch", "traveleval", "--home", str(home), "--url", url + "/{path}",
                   "--pins-url", url + "/pins/{path}")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "not the official database/categories.json at commit 3638d55590ed" in done.stderr
    categories.write_bytes(original + b" ")  # one byte more than the manifest says: refused as it arrives
    done = run_cli("data", "fetch", "traveleval", "--home", str(home), "--url", url + "/{path}",
                   "--pins-url", url + "/pins/{path}")
    assert done.returncode == 1 and f"more than {len(original):,} bytes" in done.stderr


def test_import_recognises_a_traveleval_folder(traveleval_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run_cli("data", "import", str(traveleval_data), "--home", str(home))
    assert done.returncode == 0, done.stderr
    assert "3,411 attractions" in done.stdout and "Gaode caches: none" in done.stdout
    assert sorted(path.name for path in (home / "traveleval").iterdir()) == ["data", "database", "traveleval.sqlite"]
