"""A scripted benchmark for the runner's tests and every test that makes a whole run, plugged in through the registry
as `tests.runner.toy_benchmark:ToyBenchmark`.

Each task asks for a fixed number of LLM calls (from a hash of its id: 1..`max_calls` for one task in
`long_every`, 1..3 for the others, so big runs stay quick while some rollouts are long). The `scripted` strategy
makes them one after another, each prompt carrying a digest of every reply so far, so a reply given to the wrong
rollout, lost or replayed out of order changes the answer. `reference_result` computes the same rollout
sequentially in-process, answering like the mock server's default echo reply: the reference the runner's
concurrent results must equal.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks.base import DELIVERED, Benchmark, Evaluation, RolloutResult, Task, Verdict
from providers.interface import ChatRequest, ChatResponse, Message
from providers.scripted_replies import MockRequest, complete
from providers.stages import PLANNER, stage
from providers.tokens import count_prompt_tokens
from runner.mock_server.replies import echo_reply

SERVED_MODEL = "toy"
"""The model name the toy spec's `openai-compatible:toy@URL` sends, which the echo reply repeats."""


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: int = 20
    max_calls: int = 30
    long_every: int = 1
    crash_task: str | None = None
    """A task whose rollout raises (to check a strategy bug is recorded, not fatal)."""
    preamble: int = 0
    """Lines of instructions every prompt starts with: one text, so the cache stores its chunks once for all."""
    evaluate_s: float = 0.0
    """How long scoring takes (a signal can land after the rollouts)."""
    reword_from: int | None = None
    """The step from which prompts are worded differently (a prompt changed part-way through every rollout)."""
    planner_last: bool = False
    """Each rollout's last call is made as the Planner's (`providers.stages.PLANNER`), the others as agent steps."""


def calls_for(task_id: str, max_calls: int, long_every: int = 1) -> int:
    h = int(hashlib.sha256(task_id.encode()).hexdigest(), 16)
    return 1 + h % (max_calls if (h >> 64) % long_every == 0 else min(3, max_calls))


class ScriptedStrategy:
    name = "scripted"
    description = "a fixed number of calls, each prompt carrying a digest of the replies so far"

    def __init__(self, crash_task: str | None = None, preamble: int = 0, reword_from: int | None = None,
                 planner_last: bool = False) -> None:
        self.crash_task = crash_task
        self.reword_from = reword_from
        self.preamble = "".join(f"Instruction {n}: plan carefully.\n" for n in range(preamble))
        self.planner_calls = float(planner_last)
        """`benchmarks.base.PlannerCalls`, with `planner_share` (None: the Planner's share of the calls)."""
        self.planner_share: float | None = None

    async def __call__(self, task: Task, model: Any, tools: Any) -> RolloutResult:
        digest = hashlib.sha256(task.id.encode())
        steps = []
        for step in range(task.input["calls"]):
            if task.id == self.crash_task and step == 1:
                raise RuntimeError("scripted crash")
            prompt = f"{self.preamble}task {task.id} step {step} after {digest.hexdigest()[:16]}"
            if self.reword_from is not None and step >= self.reword_from:
                prompt = f"{self.preamble}Step {step} of task {task.id}, after {digest.hexdigest()[:16]}"
            request = ChatRequest(model="", messages=(Message("user", prompt),), max_tokens=24)
            with stage(PLANNER) if self.planner_calls and step == task.input["calls"] - 1 else nullcontext():
                reply = await model.complete(request)
            digest.update(reply.text.encode())
            steps.append({"step": step, "reply": reply.text})
        return RolloutResult(DELIVERED, answer=digest.hexdigest(), plan={"task": task.id, "calls": len(steps)},
                             steps=steps)


class SilentStrategy:
    """Makes no LLM call at all (a baseline)."""

    name = "silent"
    description = "no LLM call"

    async def __call__(self, task: Task, model: Any, tools: Any) -> RolloutResult:
        return RolloutResult(DELIVERED, answer="", plan=None)


class ToyBenchmark(Benchmark):
    name = "toy"
    options_model = ToyOptions
    statuses: Mapping[str, str] = {}

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        assert isinstance(options, ToyOptions)
        return [Task(str(n), {"calls": calls_for(str(n), options.max_calls, options.long_every)})
                for n in range(options.tasks)]

    def strategies(self, options: BaseModel) -> Sequence[Any]:
        assert isinstance(options, ToyOptions)
        return [ScriptedStrategy(options.crash_task, options.preamble, options.reword_from, options.planner_last),
                SilentStrategy()]

    def open_tools(self, options: BaseModel) -> None:
        return None

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        assert isinstance(options, ToyOptions)
        time.sleep(options.evaluate_s)  # in a worker thread, as every benchmark's scoring
        return [Evaluation((Verdict("toy", "all_calls_made", (r.plan or {}).get("calls") == t.input["calls"]),),
                           {"mode": mode}) for t, r in zip(tasks, results, strict=True)]

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        for number, (task, result) in enumerate(zip(tasks, results, strict=True), start=1):
            yield {"idx": number, "task": task.id, "answer": result.answer}


class EchoModel:
    """In-process stand-in for the mock server's default reply (same text, same truncation)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        mock = MockRequest("openai", SERVED_MODEL, request.messages, request.max_tokens, request.stop, {})
        prompt = count_prompt_tokens((m.role, m.content) for m in request.messages)
        return ChatResponse(complete(mock, echo_reply(mock), prompt).text)


async def reference_result(task: Task) -> RolloutResult:
    """The scripted rollout of `task`, run alone and in-process."""
    return await ScriptedStrategy()(task, EchoModel(), None)
