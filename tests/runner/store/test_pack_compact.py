"""A results store as a pack holds it (`runner.store.pack_compact`): long step texts as line numbers shared with the
cache entries, cache keys as entry numbers; restored, every row is as it was."""

from __future__ import annotations

from pathlib import Path

import orjson

from runner.store.pack import open_pack
from runner.store.pack_compact import KEYED, LINES_FROM, Lines, compact_store, opened, restore_store

VERSION_1_PACK = Path(__file__).parents[2] / "runner" / "cli" / "packs" / "calendar-v1.tbpack"


def _rows(image: bytes) -> dict[str, list[tuple[object, ...]]]:
    db = opened(image)
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
    rows = {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in tables}
    db.close()
    return rows


def test_a_long_text_is_stored_once_and_comes_back_whole() -> None:
    lines = Lines()
    table = "\n".join(f"row {n}  price {n * 10}" for n in range(40))
    assert len(table) >= LINES_FROM
    first, second = lines.compact({"observation": table}), lines.compact(["Observation: x", {"m": table + "\n"}])
    assert first == {"observation": {"$lines": " ".join(str(n) for n in range(1, 41))}}
    assert second[1]["m"]["$lines"].endswith(" 40 41")  # the same lines, one new (the empty last one)
    again = Lines(lines.text())  # a reader of the pack's file of lines
    assert again.restore(first) == {"observation": table} and again.restore(second)[1]["m"] == table + "\n"
    assert lines.compact("short") == "short"


def test_a_compacted_store_is_restored_row_for_row() -> None:
    with open_pack(VERSION_1_PACK) as pack:
        image = pack.store()
        entries = [key for key, _ in pack.entries()]
    assert image is not None
    db = opened(image)  # a step holding a tool's long answer, as TravelPlanner's do (Natural Plan's are short)
    table = "\n".join(f"Flight F{n}  from Denver  to Austin  {n * 10} USD" for n in range(30))
    db.execute("UPDATE step SET data = ? WHERE rollout_id = 1", (orjson.dumps({"observation": table}).decode(),))
    db.commit()
    image = db.serialize()
    db.close()
    before = _rows(image)
    numbers = {key: n for n, key in enumerate(entries, 1)}
    lines = Lines()
    compacted = compact_store(image, lines, numbers)
    stored = _rows(compacted)
    assert any("$lines" in data for _, _, data in stored["step"])  # the prompts the steps hold, as line numbers
    keys = [row[3] for row in stored["llm_call"]]
    assert keys and all(key.startswith("#") for key in keys)  # no 64-digit key left
    assert {table for table in KEYED} <= stored.keys()
    assert _rows(restore_store(compacted, Lines(lines.text()), entries)) == before
