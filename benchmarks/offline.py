"""Offline, deterministic models every benchmark answers: `offline:oracle` and `offline:noisy[?OPTIONS]`.

No network and no key: a benchmark's `offline` part (a `base.Responder`) recognises its own prompts and answers them
as its oracle would (or with the mistakes `noisy` injects). The registry serves `offline:` model strings through
`providers.registry.resolve_model` and asks the offline parts of the benchmarks it loaded (a run's; every benchmark in
a process that loaded none, like `tripbench mock-server`), in load order; a `fallback` part (one that answers any
prompt) is asked last.

Both models apply stop sequences and `max_tokens` exactly as the mock server does (one shared function), so a
direct call and a call through the mock server and the openai SDK return the same text. `mock_reply` is the mock
server's reply function (`reply = "benchmarks.offline:mock_reply"`): the SDK's model name (`oracle`,
`noisy?seed=1`) selects the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from time import perf_counter
from urllib.parse import parse_qsl

from benchmarks.base import Responder
from benchmarks.registry import OFFLINE, load_all, loaded_benchmarks
from benchmarks.reporting import RolloutView, RunView
from errors import UsageError, UserError
from providers.interface import ChatRequest, ChatResponse, Usage
from providers.scripted_replies import MockRequest, NoReply, complete

CHARS_PER_TOKEN = 4
MODELS = {
    "offline:oracle": "the reference answer to every benchmark prompt, planned from the benchmark's own data: it "
                      "fails only where that data allows no passing answer (a flight missing from a partial flights "
                      "table, a budget no plan can meet), and the run and report say so",
    "offline:noisy": "the oracle with seeded, known mistakes (`?seed=1&rate=0.5`); on TravelPlanner they target the "
                     "tool agent (two-stage: dead loops, max steps, token limit, an unparsable plan): of the "
                     "sole-planning strategies only direct meets one, its unparsable plans",
}
"""The models that need no key and no network, and what each does (`tripbench list`, `tripbench run --help`)."""


def _ordered() -> list[Responder]:
    """The offline parts of the loaded benchmarks, in load order, fallbacks last (each imported at its first use)."""
    found = [part for benchmark in loaded_benchmarks() if (part := benchmark.offline) is not None]
    return sorted(found, key=lambda responder: responder.fallback)


def reply_for(model: str, prompt: str) -> str:
    """The reply of offline model `model` (`oracle`, `noisy`, `noisy?seed=1`) to a prompt.

    Raises:
        UserError: no benchmark's offline model takes this name, or none recognises the prompt.
    """
    for responder in _ordered():
        if (reply := responder.reply(model, prompt)) is not None:
            return reply
    raise UserError(f"offline:{model}: no benchmark's offline model recognises this prompt")


def validate(model: str) -> None:
    """Raises `UsageError` unless some loaded benchmark's offline part takes the offline model name `model`."""
    problems: list[str] = []
    for responder in _ordered():
        try:
            responder.validate(model)
            return
        except UserError as exc:
            problems.append(str(exc))
    loaded = ", ".join(benchmark.name for benchmark in loaded_benchmarks()) or "none"
    raise UsageError("; ".join(problems) or f"offline:{model}: no offline models here (benchmarks loaded: {loaded}; "
                     "a benchmark's `offline` part gives them)")


class OfflineModel:
    """A `ChatModel` answering from `reply_for`; no network, deterministic."""

    def __init__(self, name: str) -> None:
        validate(name)  # the name and its options are checked now, not at the first call
        self.name = name
        self.provider = OFFLINE
        self.model = name

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = perf_counter()
        messages = tuple(request.messages)
        prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
        mock = MockRequest("openai", self.name, messages, request.max_tokens, tuple(request.stop), {})
        # offline models bill nothing, so an estimate will do: exact counting of every ~10k-token ReAct prompt
        # would be most of a demo's CPU time
        estimate = sum(len(m.content) for m in messages) // CHARS_PER_TOKEN
        done = complete(mock, reply_for(self.name, prompt), estimate)
        return ChatResponse(text=done.text, finish_reason=done.finish,
                            usage=Usage(input_tokens=done.input_tokens, output_tokens=done.output_tokens),
                            latency_s=perf_counter() - started)


def mock_reply(request: MockRequest) -> str:
    """The mock server's reply function: the offline model named by the request's model field, with every built-in
    and installed benchmark's responder loaded."""
    return _reply_as(request.model.removeprefix(f"{OFFLINE}:"), request)


def oracle_reply(request: MockRequest) -> str:
    """The mock server's reply function of `tripbench mock-server --reply oracle`: `offline:oracle`'s answer, whatever
    model the request names."""
    return _reply_as("oracle", request)


def noisy_reply(request: MockRequest) -> str:
    """`tripbench mock-server --reply noisy`: `offline:noisy`'s answer, whatever model the request names."""
    return _reply_as("noisy", request)


def _reply_as(model: str, request: MockRequest) -> str:
    if not loaded_benchmarks():  # a mock server in a process of its own
        load_all()
    prompt = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    try:
        reply = reply_for(model, prompt)
    except UserError as exc:
        raise NoReply(str(exc)) from None
    if any(reply == responder.unrecognised for responder in _ordered()):
        raise NoReply(f"offline:{model}: no installed benchmark's offline model recognises this prompt")
    return reply


def oracle_or_noisy(parse_noisy: Callable[[str], object]) -> Callable[[str], None]:
    """A responder's `validate` for the usual pair: `oracle` (no options) and `noisy[?OPTIONS]`, whose options
    `parse_noisy` checks (raising `UserError`)."""
    def validate(model: str) -> None:
        name, _, options = model.partition("?")
        if name == "noisy":
            parse_noisy(options)
        elif name != "oracle" or options:
            raise UserError(f"unknown offline model {model!r}: expected offline:oracle or "
                            "offline:noisy[?seed=N&rate=R]")
    return validate


def seed_and_rate(options: str, default_rate: float, benchmark: str) -> tuple[int, float]:
    """Read a noisy model's `seed=3&rate=0.5` (the part of the model string after `?`).

    Raises:
        UserError: another option, a value that is not a number, a rate outside 0..1.
    """
    values = dict(parse_qsl(options, keep_blank_values=True))
    unknown = set(values) - {"seed", "rate"}
    if unknown:
        raise UserError(f"offline:noisy?{options}: {benchmark}'s noisy model takes seed and rate, not "
                        f"{', '.join(sorted(unknown))}")
    try:
        seed, rate = int(values.get("seed", 0)), float(values.get("rate", default_rate))
    except ValueError as exc:
        raise UserError(f"offline:noisy?{options}: options must be numbers ({exc})") from None
    if not 0 <= rate <= 1:
        raise UserError(f"offline:noisy?{options}: rate must be between 0 and 1")
    return seed, rate


def noisy_check(run: RunView, expected: Callable[[RolloutView], str], found: Callable[[RolloutView], str],
                sentence: str) -> list[str]:
    """The demo's check of the model labelled `noisy`: how many of its rollouts ended as the mistakes it injected
    predict, as one line `offline:noisy: M/N <sentence> (outcome counts)`; none when the run has no such model."""
    outcomes: Counter[str] = Counter()
    checked = matched = 0
    for group in run.groups:
        for view in group.rollouts if group.model == "noisy" else ():
            if view.task is not None:
                outcome = found(view)
                checked += 1
                matched += expected(view) == outcome
                outcomes[outcome] += 1
    if not checked:
        return []
    listed = ", ".join(f"{outcome} {count}" for outcome, count in sorted(outcomes.items()))
    return [f"offline:noisy: {matched}/{checked} {sentence} ({listed})"]
