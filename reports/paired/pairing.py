"""Which groups a comparison sets against each other, and their rollouts matched by (split, task, sample).

A side is named `RUN` (every group of the run) or `RUN:MODEL/STRATEGY` (one group: a model and a strategy of the
run, all its samples). Groups are paired across the two sides when they share the model and the strategy (the same
spec before and after a change); failing that, two single groups are paired whatever they are (GPT against Claude),
else those sharing the strategy or the model (ReAct against Reflexion under one model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from errors import MissingInput, UsageError
from reports.collect import RolloutView, RunData, collect_run

PairKey = tuple[str, str, int]
"""(split, task, sample): what a rollout is matched by (both sides are one benchmark)."""


@dataclass(frozen=True, slots=True)
class Selector:
    """One side as the user named it."""

    run_dir: Path
    model: str | None = None
    strategy: str | None = None

    def __str__(self) -> str:
        return str(self.run_dir) + (f":{self.model}/{self.strategy}" if self.model is not None else "")


@dataclass(slots=True)
class Side:
    """One group of one run, its samples together: what a comparison's A or B is."""

    run: RunData
    benchmark: str
    model: str
    strategy: str
    rollouts: dict[PairKey, RolloutView] = field(default_factory=dict)

    @property
    def name(self) -> dict[str, str]:
        """How the JSON names it: {"run", "model", "strategy"}."""
        return {"run": self.run.label, "model": self.model, "strategy": self.strategy}

    @property
    def label(self) -> str:
        return f"{self.run.label}:{self.model}/{self.strategy}"


@dataclass(slots=True)
class Pairing:
    """Two sides and their rollouts matched, in A's order; the rollouts without a partner named."""

    a: Side
    b: Side
    pairs: list[tuple[PairKey, RolloutView, RolloutView]]
    a_unmatched: list[PairKey]
    b_unmatched: list[PairKey]

    @property
    def samples(self) -> int:
        """Samples per task in the pairs (1 when each task was run once)."""
        return len({key[2] for key, _, _ in self.pairs}) or 1


def parse_selector(text: str) -> Selector:
    """`RUN` or `RUN:MODEL/STRATEGY`; the run is the longest prefix before a `:` that is a folder (a model label
    may hold `:` and `/`, as `offline:oracle` does).

    Raises:
        MissingInput: no folder of that name.
    """
    if Path(text).is_dir():
        return Selector(Path(text))
    for at in (n for n, char in enumerate(text) if char == ":"):
        run, group = text[:at], text[at + 1:]
        if run and Path(run).is_dir():
            model, slash, strategy = group.rpartition("/")
            if not slash or not model or not strategy:
                raise UsageError(f"{text}: name a group as RUN:MODEL/STRATEGY (got {group!r} after the run)")
            return Selector(Path(run), model, strategy)
    raise MissingInput(f"{text}: no such run directory (`tripbench run` makes one; a group is RUN:MODEL/STRATEGY)")


def sides_of(run: RunData, selector: Selector) -> list[Side]:
    """The run's groups (samples together) that the selector names, in the run's order.

    Raises:
        UsageError: the run has no such group (the message lists those it has).
    """
    found: dict[tuple[str, str, str], Side] = {}
    for group in run.groups:
        side = found.setdefault((group.benchmark, group.model, group.strategy),
                                Side(run, group.benchmark, group.model, group.strategy))
        for view in group.rollouts:
            side.rollouts[(group.split, view.task_id, group.sample)] = view
    chosen = [side for side in found.values()
              if selector.model is None or (side.model, side.strategy) == (selector.model, selector.strategy)]
    if not chosen:
        have = ", ".join(f"{side.model}/{side.strategy}" for side in found.values())
        raise UsageError(f"{selector}: the run has no group {selector.model}/{selector.strategy} (it has: {have})")
    return chosen


def pair_sides(a_sides: Sequence[Side], b_sides: Sequence[Side]) -> list[tuple[Side, Side]]:
    """The group pairs to compare (see the module docstring).

    Raises:
        UsageError: nothing to pair (the message lists both sides' groups).
    """
    candidates = [(a, b) for a in a_sides for b in b_sides if a.benchmark == b.benchmark
                  and (a.run is not b.run or (a.model, a.strategy) != (b.model, b.strategy))]
    same = [(a, b) for a, b in candidates if (a.model, a.strategy) == (b.model, b.strategy)]
    if same:
        return same
    if len(candidates) == 1:
        return candidates
    shared = [(a, b) for a, b in candidates if a.model == b.model or a.strategy == b.strategy]
    if shared:
        return shared
    raise UsageError("no groups to compare: A has " + ", ".join(side.label for side in a_sides) + "; B has "
                     + ", ".join(side.label for side in b_sides)
                     + " (name one group on each side as RUN:MODEL/STRATEGY)")


def match(a: Side, b: Side) -> Pairing:
    """The rollouts of two sides matched by (split, task, sample)."""
    pairs = [(key, view, b.rollouts[key]) for key, view in a.rollouts.items() if key in b.rollouts]
    return Pairing(a, b, pairs, [key for key in a.rollouts if key not in b.rollouts],
                   [key for key in b.rollouts if key not in a.rollouts])


def baseline_pairings(run: RunData, baseline: str | None = None) -> list[Pairing]:
    """Within one run: every other group against the baseline (`MODEL/STRATEGY`, else the run's first group) of
    the same benchmark; none when the run has one group.

    Raises:
        UsageError: `baseline` is not `MODEL/STRATEGY`, or not a group of the run (the message lists them).
    """
    sides = sides_of(run, Selector(run.run_dir))
    if baseline is None:
        base = sides[0]
    else:
        model, slash, strategy = baseline.rpartition("/")
        if not slash or not model or not strategy:
            raise UsageError(f"--baseline {baseline}: name a group as MODEL/STRATEGY")
        chosen = sides_of(run, Selector(run.run_dir, model, strategy))[0]
        base = next(side for side in sides if (side.benchmark, side.model, side.strategy)
                    == (chosen.benchmark, chosen.model, chosen.strategy))
    return [match(base, side) for side in sides if side is not base and side.benchmark == base.benchmark]


def pairings(first: str, second: str, mode: str = "official") -> list[Pairing]:
    """Reads both sides' runs (a run named twice is read once) and matches every group pair.

    Raises:
        MissingInput: a side is not a folder; UserError: not a run directory, or no finished rollout;
        UsageError: an unknown group, both sides the same groups, or no groups to pair.
    """
    selectors = (parse_selector(first), parse_selector(second))
    if selectors[0] == selectors[1]:
        raise UsageError(f"{first}: both sides are the same; name two runs, or two groups of one run as "
                         "RUN:MODEL/STRATEGY")
    runs: dict[Path, RunData] = {}
    for selector in selectors:
        key = selector.run_dir.resolve()
        if key not in runs:
            runs[key] = collect_run(selector.run_dir, mode)
    a_sides, b_sides = (sides_of(runs[s.run_dir.resolve()], s) for s in selectors)
    return [match(a, b) for a, b in pair_sides(a_sides, b_sides)]
