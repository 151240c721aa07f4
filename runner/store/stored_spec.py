"""The spec a session stored, as one typed record: what the store, the outputs and the reports read of it.

The results store keeps each session's spec as JSON (`RunSpec.public_dump()`, in the `session` table). A run started
by an older tripbench lacks the settings added since, and a row may hold anything a hand or a damaged file left.
`StoredSpec.of` reads that JSON once, here only: each field with the value an older run's spec meant by its absence
(the migrations of older runs, in one place), so no reader looks a setting up by its name nor guesses a default of its
own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "seed")
"""The sampling settings a report shows per model."""


@dataclass(frozen=True, slots=True)
class StoredModel:
    """One `[[models]]` entry of a stored spec."""

    model: str
    """The public model string (no credential a URL carries)."""
    name: str | None = None
    batch: bool | str | None = None
    """Its own `batch` (`"planner"`: only the Planner's calls; None: the run's)."""
    sampling: Mapping[str, Any] = field(default_factory=dict)
    """The `SAMPLING_FIELDS` its entry sets (its own value, else `[sampling]`'s where its entry lacks the field)."""

    @property
    def label(self) -> str:
        """The model's name in rollout keys, reports and output folders."""
        return self.name or self.model


@dataclass(frozen=True, slots=True)
class StoredSpec:
    """A session's stored spec; `StoredSpec.of({})` is a run with no session yet."""

    benchmark: str = ""
    """A registry name or a `module:attribute` path (what `get_benchmark` takes)."""
    split: str | None = None
    strategies: tuple[str, ...] = ()
    samples: int = 1
    max_cost: float | None = None
    evaluate: tuple[str, ...] = ()
    """The evaluator modes the run scores with."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The benchmark's `[options]` (with the identity it adds: `Benchmark.identity`)."""
    batch: bool | str = False
    """The run's `batch` (`"planner"`: only the Planner's calls; a model's own wins)."""
    models: tuple[StoredModel, ...] = ()

    @classmethod
    def of(cls, data: Any) -> StoredSpec:
        """The record of a stored spec's JSON; what it lacks (an older run's spec), or holds in another shape, reads
        as the default that run ran with."""
        if not isinstance(data, dict):
            return cls()
        defaults = data.get("sampling") or {}  # `[sampling]`: what an entry's own `null` leaves to it
        models = tuple(
            StoredModel(str(entry.get("model") or ""), entry.get("name") or None, _batch(entry.get("batch")),
                        {key: found for key in SAMPLING_FIELDS
                         if (found := entry[key] if entry.get(key) is not None else defaults.get(key)) is not None})
            for entry in data.get("models") or () if isinstance(entry, dict))
        max_cost = data.get("max_cost")
        return cls(str(data.get("benchmark", "")), data.get("split"), tuple(data.get("strategies") or ()),
                   int(data.get("samples", 1)), float(max_cost) if max_cost is not None else None,
                   tuple(str(mode) for mode in data.get("evaluate") or ()), dict(data.get("options") or {}),
                   _batch(data.get("batch")) or False, models)

    @property
    def batched(self) -> frozenset[str]:
        """The model strings every call of which went through a batch API (a model's `batch`, else the run's): not
        a model that batched only the Planner's calls, whose other calls were sent online."""
        return frozenset(model.model for model in self.models
                         if (self.batch if model.batch is None else model.batch) is True)

    @property
    def labels(self) -> list[str]:
        """The model labels, in the spec's order."""
        return [model.label for model in self.models]


def _batch(value: Any) -> bool | str | None:
    """A stored `batch`: true, false or a stage (`"planner"`); None when absent."""
    return value if isinstance(value, bool | str) else None
