"""Reference-information fidelity: rebuild every train query's entries from the sandbox and print the match rate.

Compares each entry byte for byte with the dataset's `reference_information` and value for value with
`database/train_ref_info.jsonl` (docs/fidelity/travelplanner.md §1.2), and lists the mismatching entries. On the staged
data the residue is 32 flight tables whose rows come out in the staged file's order instead of the official one
(`tests/benchmarks/travelplanner/test_reference_fidelity.py` explains and pins it); `--official-flight-order`
re-sorts flight rows by flight number, the official file's order, to show that nothing else differs.

    python perf/fidelity_reference.py
    python perf/fidelity_reference.py --official-flight-order
    python perf/fidelity_reference.py --smoke    # the same: every train query takes seconds
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import tempfile
from pathlib import Path

from _smoke import parse_args

from benchmarks.travelplanner.reference import compare_reference
from sandbox_index import Frame, Sandbox, build_travelplanner_index, open_sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"


class FlightNumberOrder:
    """A sandbox whose flight lookups list rows by ascending flight number (the official file's order)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox

    def __getattr__(self, name: str) -> object:
        return getattr(self._sandbox, name)

    def flights(self, origin: str, destination: str, date: str) -> Frame:
        frame = self._sandbox.flights(origin, destination, date)
        order = sorted(range(len(frame)), key=lambda i: int(str(frame.rows[i][0])[1:]))
        return dataclasses.replace(frame, rows=tuple(frame.rows[i] for i in order),
                                   index=tuple(frame.index[i] for i in order))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with queries/ and database/")
    parser.add_argument("--index", type=Path, help="an existing index (default: build one from --data)")
    parser.add_argument("--official-flight-order", action="store_true", help="sort flight rows by number")
    args = parse_args(parser, official_flight_order=True)
    queries = [json.loads(line) for line in (args.data / "queries/train.jsonl").read_text("utf-8").splitlines()]
    rows = [json.loads(line) for line in (args.data / "database/train_ref_info.jsonl").read_text("utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as scratch:
        index = args.index or build_travelplanner_index(args.data / "database", Path(scratch) / "tp.sqlite").path
        with open_sandbox(index) as opened:
            sandbox = FlightNumberOrder(opened) if args.official_flight_order else opened
            compared, mismatched = 0, {}
            for number, (query, given_rows) in enumerate(zip(queries, rows, strict=True), start=1):
                given = ast.literal_eval(query["reference_information"])
                count, found = compare_reference(sandbox, query["org"], given, given_rows)  # type: ignore[arg-type]
                compared += count
                for mismatch in found:
                    mismatched.setdefault((number, mismatch.description), []).append(mismatch.form)
    for (number, description), forms in sorted(mismatched.items()):
        print(f"  query {number:>2}: {description} ({', '.join(forms)})")
    matched = compared - len(mismatched)
    print(f"{len(queries)} train queries, {compared} reference entries: {matched} identical in text and rows "
          f"({matched / compared:.1%}), {len(mismatched)} differ")


if __name__ == "__main__":
    main()
