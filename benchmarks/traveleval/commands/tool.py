"""`tripbench tool --benchmark traveleval ACTION`: one sandbox tool call, answered as the tool agents see it; with
`--show-prompt STRATEGY UID`, every message a strategy sends for one query."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import click

from benchmarks.base import Task
from benchmarks.traveleval import paths, prompts
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import TOOLS_TEXT, run_tool
from datahome import home_option
from errors import UsageError
from providers.interface import ChatModel, ChatRequest, ChatResponse


@click.command("tool")
@click.argument("action")
@home_option
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="A TravelEval folder in the official layout (default: traveleval/ in the data home).")
@click.option("--show-prompt", "strategy", metavar="STRATEGY",
              help="Instead of a tool call: ACTION is a query's uid; print every message STRATEGY sends for it, "
                   "each call answered by offline:oracle.")
@click.option("--model", default="openai:gpt-4o", show_default=True,
              help="With --show-prompt: the model string whose family sets the sampling shown.")
def tool_command(action: str, home: Path | None, data_dir: Path | None, strategy: str | None, model: str) -> None:
    """Run a TravelEval tool call and print the observation the agent would get.

    ACTION is written as the agent writes it after `Action:`, a tool and its JSON arguments, e.g.
    'search_trains {"from_city": "北京", "to_city": "上海"}' or 'search_hotels {"city": "上海", "feature": "免费停车"}'.
    With --show-prompt STRATEGY, ACTION is a query's uid (T0001, G01-2), e.g. `tool --show-prompt reflexion T0001`.
    """
    folder = data_dir or paths.data_dir(home)
    if strategy is not None:
        click.echo(show_prompt(folder, strategy, action, model))
        return
    try:
        call = prompts.parse_action(f"Action: {action}")
    except prompts.ActionError as exc:
        raise UsageError(f"{exc}\nThe tools:\n{TOOLS_TEXT}") from None
    if call.name == prompts.FINISH:
        raise UsageError("`finish` ends a rollout with its plan; score plans with `tripbench evaluate --benchmark "
                        "traveleval`")
    with Sandbox.open(ensure_index(folder)) as sandbox:
        result = run_tool(sandbox, call.name, call.arguments)
    if result.error is not None:  # an unknown tool or bad arguments: a usage error (exit 2), as for TravelPlanner
        raise UsageError(result.observation)
    # Arguments are echoed back in observations; a lone surrogate cannot be written as UTF-8.
    click.echo(result.observation.encode("utf-8", "backslashreplace").decode("utf-8"))


@dataclass
class _Recorder:
    """The model a shown strategy calls: `offline:oracle` answers, every request is kept."""

    model: ChatModel
    name: str
    """The model string the strategy sets its sampling by."""
    requests: list[ChatRequest] = field(default_factory=list)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return await self.model.complete(request)


def show_prompt(folder: Path, strategy_name: str, uid: str, model: str) -> str:
    """Every request `strategy_name` sends for query `uid` (answered by offline:oracle), as text: per call the
    sampling sent and each message in full.

    Raises:
        UsageError: an unknown strategy or uid.
    """
    from benchmarks.offline import offline_models
    from benchmarks.registry import get_benchmark
    from benchmarks.traveleval.benchmark import TravelEvalOptions

    benchmark = get_benchmark("traveleval")
    options = TravelEvalOptions(data_dir=folder)
    strategies = {strategy.name: strategy for strategy in benchmark.strategies(options)}
    if strategy_name not in strategies:
        raise UsageError(f"unknown TravelEval strategy {strategy_name!r} (one of {', '.join(strategies)})")
    tasks = {task.id: task for split in ("all", "progressive") for task in benchmark.load_tasks(split, options)}
    task: Task | None = tasks.get(uid)
    if task is None:
        raise UsageError(f"no TravelEval query has uid {uid!r} (T0001 to T1000, G01-1 to G50-3)")
    recorder = _Recorder(offline_models(benchmark, [task], options).resolve("oracle"), model)
    with Sandbox.open(ensure_index(folder)) as sandbox:
        result = asyncio.run(strategies[strategy_name](task, recorder, sandbox))
    lines = [f"{strategy_name} on {uid}: {len(recorder.requests)} call(s), answered by offline:oracle "
             f"({result.status})"]
    for number, request in enumerate(recorder.requests, start=1):
        sampling = ", ".join(f"{name} {value}" for name, value in (("temperature", request.temperature),
                                                                  ("max_tokens", request.max_tokens))
                             if value is not None) or "the provider's defaults"
        stop = f"; stop {list(request.stop)}" if request.stop else ""
        lines.append(f"\n=== call {number}: {sampling} (for {model}){stop} ===")
        for message in request.messages:
            lines.append(f"--- {message.role} ---\n{message.content}")
    return "\n".join(lines)
