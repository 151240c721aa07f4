"""Natural Plan's strategy: the record's own prompt, one LLM call, the answer as the model wrote it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.base import DELIVERED, RolloutResult, Task
from providers.interface import ChatModel, ChatRequest, Message


@dataclass(frozen=True, slots=True)
class DirectStrategy:
    """`direct`: the official prompt (`prompt_5shot` by default, as in the paper, or `prompt_0shot`) as one user
    message; the answer is scored as the model wrote it."""

    shots: int = 5
    name: str = "direct"
    description: str = "the record's official prompt (5-shot by default), one call"
    expected_calls: float = 1.0

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        prompt = str(task.input[f"prompt_{self.shots}shot"])
        response = await model.complete(ChatRequest(model="", messages=(Message("user", prompt),)))
        return RolloutResult(DELIVERED, answer=response.text,
                             steps=[{"prompt": f"prompt_{self.shots}shot", "answer": response.text}])
