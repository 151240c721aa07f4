"""A small deterministic TravelPlanner world, built the way the paper built the real one (Xie et al. 2024, §3, A.3).

`generate_world(out, seed=...)` writes the official folder layout — `database/` with the five CSV tables (official
headers) and the `background/` city lists, plus `queries/<split>.jsonl` in the Hugging Face field layout and
`queries/<split>_ref_routes.jsonl`, each query's feasible route, in the layout of the staged validation routes
(sole planning rebuilds reference information from it) — so the real importer
(`sandbox_index.build_travelplanner_index`) and the real query loader read it exactly as they read the official
data. Same seed, same bytes.

What it reproduces from the paper's construction:
* states with cities; driving distances for every ordered city pair (a few rows empty, a few with a `day` duration,
  a few pairs absent — the shapes that make self-driving / taxi invalid, docs/fidelity/travelplanner.md §3.2);
* flights between city pairs on dates in March 2022, price = distance × U(0.2, 0.5) (Appendix A.3);
* restaurants with cuisines from the 15 labels and average costs; accommodations with room types, house rules (a
  few empty: invisible after `dropna()`, docs/fidelity/travelplanner.md §1.1), minimum nights, maximum occupancy;
  attractions;
* queries per (level, days) cell with the element selection and budget heuristic of `utils/`
  (docs/fidelity/travelplanner.md §9), keeping only queries for which `plan_search.build_plan` finds a plan that passes
  every check (the paper had humans verify feasibility; this is our machine check).
The query text follows the official phrasing closely enough for `offline.parse_query` to read it back.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.travelplanner.offline.world_queries import make_queries
from benchmarks.travelplanner.offline.world_tables import LEVELS, build_tables

SPLIT = "demo"

@dataclass(frozen=True, slots=True)
class WorldSummary:
    """What `generate_world` wrote."""

    root: Path
    database: Path
    queries: Path
    rows: dict[str, int]
    queries_per_level: dict[str, int] = field(default_factory=dict)


def generate_world(out: Path, *, seed: int = 0, per_cell: int = 2, split: str = SPLIT) -> WorldSummary:
    """Write a deterministic world (database + queries) under `out`.

    Args:
        out: folder to write `database/` and `queries/` into (created; existing files are overwritten).
        seed: the only source of randomness: same seed, byte-identical files.
        per_cell: queries per (level, days) cell; 9 cells.
        split: name of the query file, `queries/<split>.jsonl`.

    Returns:
        Paths and row counts.
    """
    tables = build_tables(random.Random(seed))
    database = Path(out) / "database"
    for relative, text in tables.files().items():
        path = database / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    records, routes = make_queries(tables, random.Random(seed + 1), per_cell)
    queries = Path(out) / "queries" / f"{split}.jsonl"
    queries.parent.mkdir(parents=True, exist_ok=True)
    _write_jsonl(queries, records)
    # the layout of the staged validation routes: sole planning rebuilds reference information from them
    _write_jsonl(queries.with_name(f"{split}_ref_routes.jsonl"), [
        {"idx": i, "org": r["org"], "dest": r["dest"], "annotated_route_cities": route}
        for i, (r, route) in enumerate(zip(records, routes), start=1)])
    levels = {level: sum(r["level"] == level for r in records) for level in LEVELS}
    return WorldSummary(Path(out), database, queries, tables.row_counts(), levels)


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_bytes("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"))
