"""The notebook NotebookWrite fills and the Planner reads (docs/fidelity/travelplanner.md §3.7)."""

from __future__ import annotations

from typing import Any

from benchmarks.travelplanner.render import table_text
from sandbox_index import Frame


class Notebook:
    """What NotebookWrite stores and the Planner reads (docs/fidelity/travelplanner.md §3.7); one per query
    (`reset`)."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, Frame | str | list[str] | None]] = []

    def write(self, data: Frame | str | list[str] | None, short_description: str) -> str:
        """Record `data` (the agent's current_data, possibly None); returns the official observation."""
        self._entries.append((short_description, data))
        return f"The information has been recorded in Notebook, and its index is {len(self._entries) - 1}."

    def list_all(self) -> list[dict[str, Any]]:
        """Every entry as `{index, Short Description, Content}`; a Frame's content is rendered as text."""
        return [
            {"index": i, "Short Description": description,
             "Content": table_text(data) if isinstance(data, Frame) else data}  # None and strings as they are
            for i, (description, data) in enumerate(self._entries)
        ]

    def reset(self) -> None:
        """Forget every entry (the agent does this at the start of each query)."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
