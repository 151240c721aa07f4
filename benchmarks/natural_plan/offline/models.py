"""Natural Plan's answers for the offline models: `offline:oracle` gives the gold plan in the 5-shot answer format,
`offline:noisy[?seed=N&rate=R]` the gold plan with one known mistake in a share `rate` of the tasks.

The gold plan is in the record, not in the prompt: the models answer the prompts of the tasks they are built from
(`known`). This module is the benchmark's `offline` part (`responder`).

The mistakes and the error kind the scoring must report for each (`MISTAKES`; which one a task gets is a pure
function of the seed and the prompt, `injected_mistake`):

- trip: the first two cities swapped (`wrong order`), a day moved from one stay to the next (`wrong durations`),
  prose (`unparseable answer`);
- calendar: another weekday (`wrong day`, multi-day tasks), an hour later or earlier (`wrong time`), prose
  (`unparseable answer`);
- meeting: the last meeting left out (`fewer meetings`), a wait that goes nowhere (`... wait goes backward`), prose
  (`... unknown step`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel

from benchmarks.base import Responder, Task
from benchmarks.natural_plan.evaluation import calendar, trip
from benchmarks.natural_plan.evaluation.scored import UNPARSEABLE
from benchmarks.natural_plan.offline.known import KnownPrompts
from benchmarks.natural_plan.offline.world import DAYS, trip_plan_text
from benchmarks.offline import NoisyConfig, NoisyOptions

DEFAULT_RATE = 0.6
PROSE = "I could not find a plan that satisfies every constraint, sorry"
MISTAKES: Mapping[str, tuple[str, ...]] = {
    "trip": ("wrong order", "wrong durations", UNPARSEABLE),
    "calendar": ("wrong day", "wrong time", UNPARSEABLE),
    "meeting": ("fewer meetings", "invalid meeting step: wait goes backward", "invalid meeting step: unknown step"),
}
"""Task -> the mistakes `offline:noisy` makes, named by the error kind scoring reports for each."""


NOISY = NoisyOptions("Natural Plan", DEFAULT_RATE)
"""`offline:noisy`'s options: `seed=3&rate=0.5`."""


def oracle_answer(record: Mapping[str, Any]) -> str:
    """The gold plan in the 5-shot answer format."""
    plan = record["golden_plan"]
    return "SOLUTION: " + " ".join(plan) if record["task"] == "meeting" else str(plan)


def injected_mistake(record: Mapping[str, Any], config: NoisyConfig) -> str | None:
    """The error kind `offline:noisy` builds into its answer to this record (None: the oracle's answer)."""
    rng = random.Random(f"{config.seed}\x1f{record.get('prompt_5shot') or record.get('prompt_0shot')}")
    if rng.random() >= config.rate:
        return None
    kinds = MISTAKES[record["task"]]
    kind = kinds[rng.randrange(len(kinds))]
    if kind == "wrong day" and int(record["num_days"]) < 2:
        return "wrong time"
    if record["task"] == "meeting" and not any(step.startswith("You meet") for step in record["golden_plan"]):
        return None  # a gold plan meeting nobody: any of these answers would still be solved
    return kind


def noisy_answer(record: Mapping[str, Any], config: NoisyConfig) -> str:
    kind = injected_mistake(record, config)
    if kind is None:
        return oracle_answer(record)
    if kind in (UNPARSEABLE, "invalid meeting step: unknown step"):
        return PROSE + ("." if record["task"] == "meeting" else "")
    if record["task"] == "trip":
        stays = trip.gold(record)
        if kind == "wrong order":
            stays[0], stays[1] = (stays[1][0], stays[0][1]), (stays[0][0], stays[1][1])
        else:
            shift = 1 if stays[1][1] > 1 else -1
            stays[0], stays[1] = (stays[0][0], stays[0][1] + shift), (stays[1][0], stays[1][1] - shift)
        return trip_plan_text(stays)
    if record["task"] == "calendar":
        return _moved_slot(str(record["golden_plan"]), kind)
    steps = list(record["golden_plan"])
    if kind == "fewer meetings":
        last = max(n for n, step in enumerate(steps) if step.startswith("You meet"))
        steps = steps[:last]
    else:
        start_time = record["constraints"][0][1]
        steps.insert(1, f"You wait until {start_time}.")
    return "SOLUTION: " + " ".join(steps)


def _moved_slot(gold: str, kind: str) -> str:
    day, start, end = calendar.parse(gold)
    if kind == "wrong day":
        day = next(other for other in DAYS if other != day)
    else:
        shift = 1.0 if end + 1 <= 17 else -1.0
        start, end = start + shift, end + shift
    return f"Here is the proposed time: {day}, {calendar.clock_text(start)} - {calendar.clock_text(end)} "


def reply_for(known: KnownPrompts, model: str, prompt: str) -> str | None:
    """The offline model's answer to a Natural Plan prompt it knows (None: not one of the known prompts)."""
    record = known.record_for(prompt)
    if record is None:
        return None
    name, _, options = model.partition("?")
    if name == "oracle" and not options:
        return oracle_answer(record)
    return noisy_answer(record, NOISY.parse(options))


def responder(tasks: Sequence[Task], options: BaseModel | None) -> Responder:
    """Natural Plan's answers to the prompts of `tasks` (none: of the data home's tasks)."""
    return Responder(NOISY.validate, partial(reply_for, KnownPrompts(tasks)))
