"""The mock server's knobs, validated with pydantic and readable from a TOML or JSON file.

Example `mock.toml`:

    seed = 7
    rpm = 600
    tpm = 100000
    slots = 4               # optional: 4 requests decoded at once, the rest queue (llama.cpp --parallel 4)
    reply = "mypackage.replies:travel_agent"   # optional: module:function producing replies

    [latency]
    kind = "lognormal"      # fixed | uniform | lognormal
    median_s = 0.2
    sigma = 0.5

    [faults]                # fractions of requests, drawn from a generator seeded with `seed`
    rate_limited = 0.2      # 429 with Retry-After: retry_after_s
    server_error = 0.05     # 500
    hang = 0.02             # no answer for hang_s, then the connection is dropped
    malformed = 0.01        # 200 with a truncated JSON body
    dropped = 0.0           # connection closed without an answer
    [batches]               # the batch APIs
    delay_s = 30            # a batch ends this long after it is created
    expire_every = 50       # every 50th batch request expires
    lose_created_every = 10 # every 10th batch is created but the answer to its creation is lost
    cut_results_every = 3   # every 3rd read of a batch's results drops half-way through
    # usage = "missing"     # replies lie about their usage (the tally bills the truth): see `usage_lies`
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from errors import ConfigError
from errors.validation import config_error
from runner.mock_server.usage_lies import UsageLie


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Latency(_Strict):
    """How long a successful reply takes, before it is sent."""

    kind: Literal["fixed", "uniform", "lognormal"] = "fixed"
    seconds: float = Field(default=0.0, ge=0)
    """`fixed`: every reply takes this long."""
    low_s: float = Field(default=0.0, ge=0)
    """`uniform`: lower bound."""
    high_s: float = Field(default=0.0, ge=0)
    """`uniform`: upper bound."""
    median_s: float = Field(default=0.0, ge=0)
    """`lognormal`: the median (exp of the underlying normal's mean)."""
    sigma: float = Field(default=0.5, ge=0)
    """`lognormal`: standard deviation of the underlying normal."""

    @model_validator(mode="after")
    def _bounds_ordered(self) -> Latency:
        if self.kind == "uniform" and self.high_s < self.low_s:
            raise ValueError("uniform latency needs low_s <= high_s")
        return self


class Faults(_Strict):
    """Random faults: each request draws one, with these probabilities (seeded)."""

    rate_limited: float = Field(default=0.0, ge=0, le=1)
    server_error: float = Field(default=0.0, ge=0, le=1)
    hang: float = Field(default=0.0, ge=0, le=1)
    malformed: float = Field(default=0.0, ge=0, le=1)
    dropped: float = Field(default=0.0, ge=0, le=1)
    retry_after_s: float | None = Field(default=1.0, ge=0)
    """Retry-After sent with injected 429s; None sends none."""
    hang_s: float = Field(default=3600.0, ge=0)
    """How long a hung request stays unanswered before its connection is dropped."""

    @model_validator(mode="after")
    def _at_most_one(self) -> Faults:
        if self.rate_limited + self.server_error + self.hang + self.malformed + self.dropped > 1:
            raise ValueError("fault rates must add up to at most 1")
        return self


class Batches(_Strict):
    """How the batch APIs (OpenAI Batch, Anthropic Message Batches) process what they are given."""

    delay_s: float = Field(default=0.0, ge=0)
    """A batch ends this long after it is created; its requests are answered and billed then."""
    error_every: int | None = Field(default=None, ge=1)
    """Every Nth batch request the server processes (counted across batches) errors with HTTP 500."""
    expire_every: int | None = Field(default=None, ge=1)
    """Every Nth batch request expires unprocessed (and unbilled), as when the 24 h window runs out."""
    lose_created_every: int | None = Field(default=None, ge=1)
    """Every Nth batch created (either API) is made and processed, but the connection of its creation drops before
    the answer: what a client sees when its submission times out after the provider made the batch."""
    cut_results_every: int | None = Field(default=None, ge=1)
    """Every Nth read of an ended batch's results (an OpenAI output or error file, Anthropic's results) sends half
    its body, then the connection drops."""


class MockConfig(_Strict):
    """Everything the mock server can be told."""

    seed: int = 0
    """Seeds the fault and latency draws: the same seed and request order give the same faults."""
    latency: Latency = Latency()
    faults: Faults = Faults()
    rpm: int | None = Field(default=None, gt=0)
    """Requests per minute allowed per API key (token bucket, full at start); None for no limit."""
    tpm: int | None = Field(default=None, gt=0)
    """Tokens per minute per API key, charged input + output tokens of each reply; None for no limit."""
    reply: str | None = None
    """`module:function` called with a `MockRequest`, returning a str or a `MockReply`; None for the echo."""
    slots: int | None = Field(default=None, gt=0)
    """Successful requests worked on at once, as a local server's decoding slots (llama.cpp `--parallel N`, vLLM's
    batch): the rest queue, first come first served, before their latency starts; `GET /props` says how many, as
    llama.cpp's server does (`total_slots`). None: every request at once."""
    context_window: int = Field(default=128_000, gt=0)
    """Prompts with more tokens get the protocol's context-length error."""
    context_wording: Literal["openai", "vllm", "llama.cpp"] = "openai"
    """Whose words the OpenAI protocol's context-length error uses: OpenAI's, vLLM's (its fields at the top of the
    body) or llama.cpp's llama-server (`exceed_context_size_error`)."""
    models: tuple[str, ...] = ("mock",)
    """What `GET /v1/models` lists (requests may name any model all the same)."""
    api_keys: tuple[str, ...] | None = None
    """Accepted keys; None accepts any non-empty key."""
    batches: Batches = Batches()
    keep_requests: int = Field(default=10_000, ge=0)
    """How many received requests to keep for inspection (the newest)."""
    usage: UsageLie = "honest"
    """What successful replies (online and batch) report as usage: `honest`, or a lie (`missing`, `null`,
    `negative`, `huge`, `overflow`, `fraction`, `text`; see `usage_lies`). The tally bills the true counts anyway."""


def load_config(path: str | os.PathLike[str]) -> MockConfig:
    """Read a `MockConfig` from a `.toml` or `.json` file.

    Args:
        path: The file (a `str` from a notebook works as well as a `Path`).

    Raises:
        ConfigError: the file is unreadable, not TOML/JSON, or a field is wrong (named with its path).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), "(file)", "a readable file", exc.strerror) from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(str(path), "(file)", "a .toml or .json file", path.suffix or path.name)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(str(path), "(file)", f"valid {path.suffix[1:].upper()}", str(exc)) from None
    try:
        return MockConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, MockConfig, str(path)) from None
