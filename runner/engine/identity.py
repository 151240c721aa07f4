"""A run directory's identity: everything that defines its results, kept in `RUN_DIR/identity.json` and checked before
a session writes anything.

    benchmark, split            what is run
    evaluate                    the evaluator modes that score it
    data                        name -> sha256 of every data file it reads (`Benchmark.data_fingerprints`)
    parts                       one per spec that made it: models (label -> request settings as sent, extra_body
                                included), strategies, the task ids chosen (after `tasks` and `limit`), samples

The settings every part shares (sampling defaults, `max_calls`, the benchmark's options) stay compared by
`check_resume` on the stored spec, as before. A spec whose part is one the run has resumes it; any other is refused
naming each difference, unless `--extend` adds it as a new part: new models, strategies, tasks or samples, never a
changed model or data file. Each (model, strategy) group is then planned as its own parts say (`planned_keys`), so a
second spec's group never takes the first's N.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from benchmarks.base import Benchmark, Task
from errors import UsageError, UserError
from providers.urls import public_model
from runner.engine.expand import split_name
from runner.engine.spec import RunSpec
from runner.store.provenance import IDENTITY_FILE
from runner.store.records import RolloutKey

FORMAT = 1
"""The version of `identity.json`'s layout; a newer one is refused."""
SHOWN = 4
"""Names listed per difference at most (task ids, models), the rest counted."""


class Prepared(Protocol):
    """What the identity reads of a prepared run (`runner.engine.execute.Prepared`, which imports this module)."""

    @property
    def spec(self) -> RunSpec: ...
    @property
    def spec_path(self) -> Path: ...
    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def options(self) -> BaseModel: ...
    @property
    def tasks(self) -> list[Task]: ...


@dataclass(frozen=True, slots=True)
class Identity:
    """A run's identity as `identity.json` holds it (`FORMAT`); `parts` in the order the specs came."""

    benchmark: str
    split: str
    evaluate: tuple[str, ...]
    data: dict[str, str]
    parts: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "benchmark": self.benchmark, "split": self.split, "evaluate": list(self.evaluate),
                "data": self.data, "parts": list(self.parts)}

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> Identity:
        """Raises:
            UserError: a layout this tripbench does not know (a newer one, or a damaged file), naming `source`."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise UserError(f"{source}: run identity format {found!r}, this tripbench reads format {FORMAT}: "
                            "use the tripbench that made the run, or another --run-dir")
        return cls(data["benchmark"], data["split"], tuple(data["evaluate"]), dict(data["data"]),
                   tuple(data["parts"]))

    def models(self) -> dict[str, dict[str, Any]]:
        """Every model of the run, label -> settings (parts agree on a label's settings: `differences`)."""
        return {label: settings for part in self.parts for label, settings in part["models"].items()}


def part_of(spec: RunSpec, task_ids: Sequence[str]) -> dict[str, Any]:
    """What one spec adds to a run: its models with their request settings as sent, strategies, tasks, samples."""
    return {"models": {m.label: {"model": public_model(m.model), **m.over(spec.sampling).model_dump()}
                       for m in spec.models},
            "strategies": list(spec.strategies), "tasks": list(task_ids), "samples": spec.samples}


def identity_of(prepared: Prepared) -> Identity:
    """The identity of a prepared run (reads its data files' digests: `Benchmark.data_fingerprints`)."""
    spec = prepared.spec
    folder = prepared.spec_path.absolute().parent
    split: str | Path = spec.split if spec.split is not None else folder / (spec.queries or "")
    data = dict(sorted(prepared.benchmark.data_fingerprints(split, prepared.options).items()))
    return Identity(prepared.benchmark.name, split_name(spec), tuple(sorted(spec.evaluate)), data,
                    (part_of(spec, [task.id for task in prepared.tasks]),))


def load_identity(run_dir: Path) -> Identity | None:
    """The identity a run directory holds, None when it has none (a new run, or one made before identities).

    Raises:
        UserError: an unreadable or damaged file, naming it.
    """
    path = run_dir / IDENTITY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return Identity.from_json(json.loads(text), str(path))
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{path}: damaged run identity (not the JSON tripbench writes): restore it from a copy, or "
                        "use another --run-dir") from None


def save_identity(run_dir: Path, identity: Identity) -> None:
    """Writes `identity.json` whole (a temporary file renamed over it: a crash leaves the old one or the new)."""
    path = run_dir / IDENTITY_FILE
    temporary = path.with_name(f".{IDENTITY_FILE}.{os.getpid()}")
    temporary.write_text(json.dumps(identity.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


def legacy_identity(previous: dict[str, Any], now: Identity, now_spec: RunSpec) -> Identity | None:
    """The identity of a run made before identities, from its latest stored spec; its data and evaluator modes are
    taken as today's (nothing recorded them). Its tasks are today's when its `tasks` and `limit` were; else the
    part is marked unknown, and any spec but its own is a difference. None when the stored spec cannot be read
    (`check_resume` says so)."""
    try:
        before = RunSpec.model_validate(previous)
    except ValueError:
        return None
    same_tasks = (before.tasks, before.limit) == (now_spec.tasks, now_spec.limit)
    tasks = now.parts[0]["tasks"] if same_tasks else [f"(limit {before.limit}, tasks {before.tasks})"]
    return Identity(now.benchmark, split_name(before), now.evaluate, now.data, (part_of(before, tasks),))


def merged(before: Identity | None, now: Identity, extend: bool, source: str, run_dir: Path) -> Identity:
    """The run's identity after this session: `now` for a new run, `before` for a resume, `before` plus this spec's
    part with `extend`.

    Raises:
        UsageError: the spec's identity differs from the run's and `--extend` cannot take it (or was not given),
            naming each difference (nothing has been written).
    """
    if before is None:
        return now
    part = now.parts[0]
    fixed = _fixed_differences(before, now, extend)
    if not fixed and (part in before.parts or _within(before, part)):
        return before  # a resume, or a session running some of the run's rollouts (a smaller limit): nothing new
    growth = _growth(before, part)
    if fixed or not extend:
        hint = ("use another --run-dir: --extend adds models, strategies, tasks or samples, never changes what the "
                "run has" if fixed else "resume it with the spec that made it, add these rollouts to it with "
                "--extend, or use another --run-dir")
        raise UsageError(f"{source}: {run_dir} holds another run ({'; '.join([*fixed, *growth])}); nothing was "
                         f"written: {hint}")
    return Identity(before.benchmark, before.split, tuple(sorted({*before.evaluate, *now.evaluate})), before.data,
                    (*before.parts, part))


def planned_keys(identity: Identity) -> list[RolloutKey]:
    """Every rollout the run's parts plan, each once, in the parts' order (a group's N is its own parts')."""
    seen: dict[RolloutKey, None] = {}
    for part in identity.parts:
        for task in part["tasks"]:
            for model in part["models"]:
                for strategy in part["strategies"]:
                    for sample in range(part["samples"]):
                        seen.setdefault(RolloutKey(identity.benchmark, identity.split, task, model, strategy, sample))
    return list(seen)


def _within(run: Identity, part: dict[str, Any]) -> bool:
    """Whether every rollout a spec's part plans is one the run plans already."""
    return set(planned_keys(Identity(run.benchmark, run.split, (), {}, (part,)))) <= set(planned_keys(run))


def _fixed_differences(before: Identity, now: Identity, extend: bool) -> list[str]:
    """What no spec may change in a run: benchmark, split, data, a model's settings; evaluator modes only grow."""
    found = [f"{name}: {_short(getattr(before, name))} then, {_short(getattr(now, name))} now"
             for name in ("benchmark", "split") if getattr(before, name) != getattr(now, name)]
    if now.evaluate != before.evaluate and not (extend and set(before.evaluate) <= set(now.evaluate)):
        found.append(f"evaluate: {_short(list(before.evaluate))} then, {_short(list(now.evaluate))} now")
    for name in sorted(before.data.keys() | now.data.keys()):
        if before.data.get(name) != now.data.get(name):
            found.append(f"data {name}: {_digest(before.data.get(name))} then, {_digest(now.data.get(name))} now")
    known = before.models()
    for label, settings in now.parts[0]["models"].items():
        for name in sorted(settings.keys() | known.get(label, settings).keys()):
            if label in known and known[label].get(name) != settings.get(name):
                found.append(f"models.{label}.{name}: {_short(known[label].get(name))} then, "
                             f"{_short(settings.get(name))} now")
    return found


def _growth(before: Identity, part: dict[str, Any]) -> list[str]:
    """How this spec's rollouts differ from the run's: models, strategies, tasks and samples it has or lacks."""
    found: list[str] = []
    for name, had, has in (("models", list(before.models()), list(part["models"])),
                           ("strategies", _union(before, "strategies"), part["strategies"]),
                           ("tasks", _union(before, "tasks"), part["tasks"])):
        added, missing = [x for x in has if x not in had], [x for x in had if x not in has]
        if added:
            found.append(f"{name}: {_names(added)} not in the run")
        if missing:
            found.append(f"{name}: the run's {_names(missing)} not in this spec")
    samples = max(p["samples"] for p in before.parts)
    if part["samples"] != samples:
        found.append(f"samples: {samples} then, {part['samples']} now")
    return found or ["models, strategies, tasks and samples paired otherwise than in any spec that made the run"]


def _union(identity: Identity, field: str) -> list[str]:
    return list(dict.fromkeys(item for part in identity.parts for item in part[field]))


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _short(value: Any) -> str:
    text = "unset" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _digest(value: str | None) -> str:
    """A data fingerprint, short (a schema version as it is)."""
    return "absent" if value is None else f"sha256 {value[:12]}…" if len(value) == 64 else value


async def bind(prepared: Prepared, run_dir: Path, previous_spec: dict[str, Any] | None, extend: bool) -> Identity:
    """The identity this session binds `run_dir` to (`merged`), checked before anything is written; the caller saves
    it (`save_identity`) once its session is recorded.

    Raises:
        UsageError: another run's spec (see `merged`).
    """
    now = await asyncio.to_thread(identity_of, prepared)
    before = load_identity(run_dir)
    if before is None and previous_spec is not None:
        before = legacy_identity(previous_spec, now, prepared.spec)
    return merged(before, now, extend, str(prepared.spec_path), run_dir)
