"""Offline, deterministic models every benchmark answers: `offline:oracle` and `offline:noisy[?OPTIONS]`.

No network and no key: a benchmark's `offline` part (`base.OfflineAnswers`) builds a `base.Responder` from the tasks it
is to answer, which recognises their prompts and answers them as its oracle would (or with the mistakes `noisy`
injects). `OfflineModels` is one set of such answers, an ordinary value: a run builds its own from its benchmark and
tasks where it is prepared (`offline_models`) and resolves its `offline:` model strings through it; a mock server in
a process of its own asks every benchmark's, over what the data home holds (`data_home_models`, read anew for each
server: data installed since a first lookup is seen). A `fallback` responder (one that answers any prompt) is asked
last.

Both models apply stop sequences and `max_tokens` exactly as the mock server does (one shared function), so a
direct call and a call through the mock server and the openai SDK return the same text. `DataHomeReplies` is the
reply function of a mock server of its own (`reply = "benchmarks.offline:DataHomeReplies"`): the SDK's model name
(`oracle`, `noisy?seed=1`) selects the model; `OfflineModels.mock_reply` is the same for a server given the models of
a run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from urllib.parse import parse_qsl

from pydantic import BaseModel

from benchmarks.base import Benchmark, Responder, Task
from benchmarks.registry import available, get_benchmark
from benchmarks.reporting import RolloutView, RunView
from errors import UsageError, UserError
from providers.interface import ChatRequest, ChatResponse, Message, Usage
from providers.prices import OFFLINE
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


def answered_prompt(messages: Sequence[Message]) -> str:
    """The prompt an offline model answers: the last user message, else (a request of system messages only, as
    TravelEval's official critique is) the last message."""
    return next((m.content for m in reversed(messages) if m.role == "user"), messages[-1].content if messages else "")


def is_offline(model: str) -> bool:
    """Whether a model string names an offline model (`offline:NAME`)."""
    return model.startswith(f"{OFFLINE}:")


class OfflineModels:
    """The offline models answering a given set of prompts: those the responders recognise, asked in order, fallbacks
    last."""

    def __init__(self, responders: Sequence[Responder] = (), benchmarks: Sequence[str] = ()) -> None:
        self._responders = sorted(responders, key=lambda responder: responder.fallback)
        self._benchmarks = list(benchmarks)
        """The names of the benchmarks whose answers these are (for messages)."""

    def include(self, other: OfflineModels) -> None:
        """Answers `other`'s prompts too (a demo's mock server, as each run is prepared)."""
        self._responders = sorted([*self._responders, *other._responders], key=lambda responder: responder.fallback)
        self._benchmarks += other._benchmarks

    def reply_for(self, model: str, prompt: str) -> str:
        """The reply of offline model `model` (`oracle`, `noisy`, `noisy?seed=1`) to a prompt.

        Raises:
            UserError: no responder takes this name, or none recognises the prompt.
        """
        for responder in self._responders:
            if (reply := responder.reply(model, prompt)) is not None:
                return reply
        raise UserError(f"offline:{model}: no benchmark's offline model recognises this prompt")

    def validate(self, model: str) -> None:
        """Raises `UsageError` unless some responder takes the offline model name `model`."""
        problems: list[str] = []
        for responder in self._responders:
            try:
                responder.validate(model)
                return
            except UserError as exc:
                problems.append(str(exc))
        raise UsageError("; ".join(problems) or f"offline:{model}: no offline models here (benchmarks: "
                         f"{', '.join(self._benchmarks) or 'none'}; a benchmark's `offline` part gives them)")

    def close(self) -> None:
        """Closes what each responder opened (`Responder.close`); they open it again if asked once more."""
        for responder in self._responders:
            if responder.close is not None:
                responder.close()

    def resolve(self, model: str) -> OfflineModel:
        """The `ChatModel` of an `offline:NAME` model string, its name checked now (`UsageError`)."""
        return OfflineModel(model.removeprefix(f"{OFFLINE}:"), self)

    def mock_reply(self, request: MockRequest) -> str:
        """A mock server's reply function: the offline model named by the request's model field."""
        return self.reply_as(request.model.removeprefix(f"{OFFLINE}:"), request)

    def reply_as(self, model: str, request: MockRequest) -> str:
        """A mock server's answer to `request` as offline model `model`, whatever model the request names.

        Raises:
            NoReply: no responder recognises the prompt (a fallback's `unrecognised` reply included): the mock server
                refuses the request.
        """
        prompt = answered_prompt(request.messages)
        try:
            reply = self.reply_for(model, prompt)
        except UserError as exc:
            raise NoReply(str(exc)) from None
        if any(reply == responder.unrecognised for responder in self._responders):
            raise NoReply(f"offline:{model}: no installed benchmark's offline model recognises this prompt")
        return reply


def offline_models(benchmark: Benchmark, tasks: Sequence[Task], options: BaseModel | None) -> OfflineModels:
    """The offline models of a run: its benchmark's answers to the prompts of its tasks (none without an `offline`
    part)."""
    part = benchmark.offline
    return OfflineModels([part.responder(tasks, options)] if part is not None else [], [benchmark.name])


def data_home_models() -> OfflineModels:
    """Every built-in and installed benchmark's offline models with no run behind them (a mock server of its own,
    `tripbench cache explain`): each answers what it finds in the data home, read at its first question; a new value
    each call, so a caller (one per server, one per command) sees the benchmarks and data installed by then."""
    models = OfflineModels()
    for name in available():
        models.include(offline_models(get_benchmark(name), (), None))
    return models


class OfflineModel:
    """A `ChatModel` answering from an `OfflineModels`; no network, deterministic."""

    def __init__(self, name: str, models: OfflineModels) -> None:
        models.validate(name)  # the name and its options are checked now, not at the first call
        self.name = name
        self.provider = OFFLINE
        self.model = name
        self._models = models

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = perf_counter()
        messages = tuple(request.messages)
        prompt = answered_prompt(messages)
        mock = MockRequest("openai", self.name, messages, request.max_tokens, tuple(request.stop), {})
        # offline models bill nothing, so an estimate will do: exact counting of every ~10k-token ReAct prompt
        # would be most of a demo's CPU time
        estimate = sum(len(m.content) for m in messages) // CHARS_PER_TOKEN
        done = complete(mock, self._models.reply_for(self.name, prompt), estimate)
        return ChatResponse(text=done.text, finish_reason=done.finish,
                            usage=Usage(input_tokens=done.input_tokens, output_tokens=done.output_tokens),
                            latency_s=perf_counter() - started)


class DataHomeReplies:
    """The reply function of a mock server of its own, made once per server (`runner.mock_server.replies`): the
    offline model named by the request's model field, as every built-in and installed benchmark answers with no run
    behind it (`data_home_models`, read when the server starts)."""

    answers_as: str | None = None
    """The offline model every request gets the answer of, whatever model it names (None: the one it names)."""

    def __init__(self) -> None:
        self._models = data_home_models()

    def __call__(self, request: MockRequest) -> str:
        if self.answers_as is None:
            return self._models.mock_reply(request)
        return self._models.reply_as(self.answers_as, request)


class OracleReplies(DataHomeReplies):
    """`tripbench mock-server --reply oracle`: `offline:oracle`'s answer, whatever model the request names."""

    answers_as = "oracle"


class NoisyReplies(DataHomeReplies):
    """`tripbench mock-server --reply noisy`: `offline:noisy`'s answer, whatever model the request names."""

    answers_as = "noisy"


@dataclass(frozen=True, slots=True)
class NoisyConfig:
    """`offline:noisy`'s options, read by its benchmark's `NoisyOptions`: the seed of its draws and the share of tasks
    that get a mistake."""

    seed: int
    rate: float
    """The share of tasks that get a mistake (the sum of `kinds` where the benchmark rates each kind)."""
    kinds: Mapping[str, float] = field(default_factory=dict)
    """Mistake kind -> the share of tasks that get it, for a benchmark that lets each kind be rated; else empty."""


@dataclass(frozen=True, slots=True)
class NoisyOptions:
    """How one benchmark's noisy model reads `seed=3&rate=0.5` (the part of the model string after `?`): its default
    rate, and the mistake kinds a user may rate one by one (`&same_action=0.2`), sharing `rate` equally otherwise."""

    benchmark: str
    default_rate: float
    kinds: tuple[str, ...] = ()

    @property
    def default(self) -> NoisyConfig:
        """`offline:noisy` with no options."""
        return self.parse("")

    def parse(self, options: str) -> NoisyConfig:
        """The config of `offline:noisy?OPTIONS`.

        Raises:
            UserError: an unknown option, a value that is not a number, a rate outside 0..1 (or rates of kinds that
                are negative or add up to more than 1).
        """
        values = dict(parse_qsl(options, keep_blank_values=True))
        if unknown := sorted(set(values) - {"seed", "rate", *self.kinds}):
            raise UserError(f"offline:noisy?{options}: {self.benchmark}'s noisy model takes "
                            f"{', '.join(('seed', 'rate', *self.kinds))}, not {', '.join(unknown)}")
        try:
            seed, rate = int(values.pop("seed", 0)), float(values.pop("rate", self.default_rate))
            kinds = {kind: float(values.get(kind, rate / len(self.kinds))) for kind in self.kinds}
        except ValueError as exc:
            raise UserError(f"offline:noisy?{options}: options must be numbers ({exc})") from None
        if kinds:
            if sum(kinds.values()) > 1 or min(kinds.values()) < 0:
                raise UserError(f"offline:noisy?{options}: the rates of mistakes must be >= 0 and add up to at most 1")
            rate = sum(kinds.values())
        elif not 0 <= rate <= 1:
            raise UserError(f"offline:noisy?{options}: rate must be between 0 and 1")
        return NoisyConfig(seed, rate, kinds)

    def validate(self, model: str) -> None:
        """A responder's `validate`: `oracle` (no options) and `noisy[?OPTIONS]` (`parse` checks them) are the
        offline models; any other name is a `UserError`."""
        name, _, options = model.partition("?")
        if name == "noisy":
            self.parse(options)
        elif name != "oracle" or options:
            raise UserError(f"unknown offline model {model!r}: expected offline:oracle or "
                            "offline:noisy[?seed=N&rate=R]")


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
