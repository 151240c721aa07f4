"""The run spec: one TOML file saying what to run, validated by pydantic with errors that name file and field.

    benchmark = "NAME"                   # a registry name or a module:attribute path
    split = "validation"                 # or: queries = "my_queries.jsonl" (relative to this file)
    limit = 20                           # first N tasks; or tasks = ["3", "17"]
    strategies = ["react"]
    samples = 1
    max_cost = 25.0                      # USD, the whole run across resumes
    concurrency = 256                    # rollouts in flight, all models together (per model: max_rollouts)

    [sampling]                           # defaults for every model
    temperature = 0.0

    [[models]]
    model = "openai:gpt-4o-mini"
    rpm = 500
    tpm = 200_000
    prices = { input = 0.15, output = 0.60 }   # USD per million tokens, overrides the bundled table
                                         # or an entry of that table: prices = "together_ai:NAME"
    request_timeout_s = 60               # per request; not in cache keys

    [retry]                              # failed calls; not in cache keys
    max_attempts = 6

    [options]                            # the benchmark's own options, validated by its options_model

    [team]                               # one cache, spend cap and rate limit shared on PostgreSQL
    url_env = "TRIPBENCH_TEAM_URL"       # the environment variable holding the connection string

A bad value is a `ConfigError` such as `run.toml: models[1].temperature: expected a number <= 2, got "hot"`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from cache.modes import CacheMode
from errors import ConfigError
from errors.validation import config_error
from providers.interface import DEFAULT_TIMEOUT_S
from providers.prices import Price, PriceTable, load_price_table
from providers.registry import BATCH_PROVIDERS, adapts, can_batch
from providers.stages import PLANNER
from providers.urls import public_model, public_url
from runner.ladder.retry import RetryPolicy

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True)


class Sampling(BaseModel):
    """Sampling parameters sent with every call (and part of every cache key)."""

    model_config = _STRICT

    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; unset leaves the strategy's own value or the provider default."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """Nucleus sampling mass."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Output tokens per call (also what the spend cap reserves for a call)."""
    seed: int | None = None
    """Provider seed, where supported."""
    extra_body: dict[str, JsonValue] | None = None
    """Fields merged as they are into the request body (a server's own, e.g. `{ enable_thinking = false }`)."""

    def over(self, defaults: Sampling) -> Sampling:
        """These values, falling back to `defaults` field by field."""
        return Sampling(**{name: getattr(self, name) if getattr(self, name) is not None else getattr(defaults, name)
                           for name in Sampling.model_fields})


PRICES = "prices"
"""The key of the validation context's price table (`parse_spec`'s `prices`)."""


def _table_entry(value: object, info: ValidationInfo) -> object:
    """`prices = "PROVIDER:NAME"`: that entry of the price table (how an `openai-compatible:` server's model, whose
    provider its URL does not tell, takes LiteLLM's price for it): the validation context's table, else the data
    home's."""
    if not isinstance(value, str):
        return value
    table = (info.context or {}).get(PRICES) or load_price_table()
    price = table.models.get(value)
    if price is None:
        near = table.nearest(value)
        raise ValueError(f"a price table entry (`tripbench prices show TEXT` lists them), got {json.dumps(value)}"
                         + (f" (did you mean {near}?)" if near else ""))
    return price


def _concurrency(value: object) -> object:
    """A model's `concurrency`: a positive integer or "auto" (one message for both, not one per kind)."""
    if value is None or value == "auto" or (type(value) is int and value >= 1):
        return value
    raise ValueError(f'an integer >= 1 or "auto", got {json.dumps(value)}')


def _batch(value: object) -> object:
    """`batch`: true, false or "planner" (one message for all three, not one per kind)."""
    if value is None or isinstance(value, bool) or value == PLANNER:
        return value
    raise ValueError(f'true, false or "{PLANNER}" (only the Planner\'s calls), got {json.dumps(value)}')


BatchSetting = Annotated[bool | Literal["planner"], BeforeValidator(_batch)]
"""Whether a model's calls go through its provider's batch API: all of them, none, or only the Planner's
(`providers.stages.PLANNER`), its agent's steps online."""


class ModelSpec(Sampling):
    """One model under test; its sampling fields override `[sampling]`.

    Entries sharing a model string share one provider client, rate limits and prices, so they must agree on every
    field but `name`, `max_rollouts`, `adaptive_calls`, `concurrency` and the sampling fields (`CLIENT_FIELDS`,
    checked by `parse_spec`).
    """

    model: str = Field(min_length=1)
    """Provider model string, e.g. `openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5`, `openai-compatible:NAME@URL`."""
    name: str | None = Field(default=None, min_length=1)
    """Label in rollout keys and reports (default: `model`); lets one model appear twice with other settings."""
    base_url: str | None = None
    """Send `openai:` / `anthropic:` requests to this server instead (a proxy, the mock server)."""
    api_key_env: str | None = None
    """Environment variable holding the API key (default: its provider's, `providers.registry.BUILTINS`)."""
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute the gateway allows itself."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute (prompt estimate + max_tokens reserved before sending)."""
    max_rollouts: int | None = Field(default=None, ge=1)
    """This model's rollouts in flight at most (the run's `concurrency` bounds all models together)."""
    adaptive_calls: bool | None = None
    """Its calls in flight follow its server: a limit that grows while the server answers as fast and backs off when
    it is full (`runner.ladder.adaptive`), at most its rollouts in flight. Unset: on for `openai-compatible:` servers,
    off for the others."""
    concurrency: Annotated[int | Literal["auto"] | None, BeforeValidator(_concurrency)] = None
    """Deprecated (one field for two things): a number N is `max_rollouts = N` with `adaptive_calls = false`; `"auto"`
    is `adaptive_calls = true`. Still read, in a spec and in a stored run; not with either of the fields that replace
    it."""
    prices: Annotated[Price | None, BeforeValidator(_table_entry)] = None
    """Price override, or the name of a price table entry; required for models the table does not know when a spend
    cap is set."""
    request_timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, allow_inf_nan=False)
    """Seconds one request may take before it fails as a timeout (retried like a 5xx); never in a cache key, and
    free to change on resume."""
    batch: BatchSetting | None = None
    """Send this model's calls through its provider's batch API (`providers.registry.BATCH_PROVIDERS`): half price,
    answers within 24 h; `"planner"`: only the Planner's calls (`providers.stages`), the agent's steps online; unset:
    the run's `batch`."""
    transport: Literal["sdk", "aiohttp"] | None = None
    """How requests travel: the official SDK's HTTP client, or aiohttp (a fraction of the client CPU per call); the
    same requests and answers either way, never in a cache key. Unset: aiohttp for `openai-compatible:` servers,
    the SDK for the hosted APIs."""

    @model_validator(mode="after")
    def _one_spelling(self) -> ModelSpec:
        if self.concurrency is not None and (self.max_rollouts is not None or self.adaptive_calls is not None):
            raise ValueError("concurrency (deprecated) or max_rollouts and adaptive_calls, not both")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields, but `max_rollouts` and `adaptive_calls` only when set: a run's stored spec stays what an older
        tripbench, which has neither, wrote and reads."""
        dumped: dict[str, Any] = handler(self)
        return {name: value for name, value in dumped.items()
                if value is not None or name not in ("max_rollouts", "adaptive_calls")}

    @property
    def adaptive(self) -> bool:
        """Whether this model's calls in flight adapt to its server (`adaptive_calls`; `concurrency = "auto"`)."""
        if self.adaptive_calls is not None:
            return self.adaptive_calls
        return self.concurrency == "auto" or (self.concurrency is None and adapts(self.model))

    @property
    def rollout_bound(self) -> int | None:
        """Rollouts of this model in flight at most (None: only the global bound)."""
        if self.max_rollouts is not None:
            return self.max_rollouts
        return self.concurrency if isinstance(self.concurrency, int) else None

    @property
    def label(self) -> str:
        """The model's name in rollout keys, reports and output folders (never a credential a URL carries)."""
        return self.name or public_model(self.model)


CLIENT_FIELDS = tuple(name for name in ModelSpec.model_fields
                      if name not in {"model", "name", "max_rollouts", "adaptive_calls", "concurrency",
                                      *Sampling.model_fields})
"""Fields of the provider client, rate limits and prices behind one model string (a field added to ModelSpec is one
unless listed as each entry's own here: an entry that silently lost its setting is the worse mistake)."""


_RETRY = RetryPolicy()


class RetrySpec(BaseModel):
    """How hard a failed call (429, 5xx, timeout, dropped connection) is retried: the fields of
    `runner.ladder.retry.RetryPolicy`.

    Never in a cache key, and free to change on resume.
    """

    model_config = _STRICT

    max_attempts: int = Field(default=_RETRY.max_attempts, ge=1)
    """Attempts per call in all, the first included (1: never retry)."""
    base_delay_s: float = Field(default=_RETRY.base_delay_s, gt=0, allow_inf_nan=False)
    """Backoff ceiling of the first retry (the wait is drawn below it); it doubles per retry up to `max_delay_s`."""
    max_delay_s: float = Field(default=_RETRY.max_delay_s, gt=0, allow_inf_nan=False)
    """Largest backoff ceiling."""
    max_retry_after_s: float = Field(default=_RETRY.max_retry_after_s, gt=0, allow_inf_nan=False)
    """A 429 asking for a longer wait (a daily quota) ends the call at once; also the longest a 429 holds back the
    model's other calls."""

    def policy(self) -> RetryPolicy:
        return RetryPolicy(**self.model_dump())


TEAM_URL_ENV = "TRIPBENCH_TEAM_URL"
"""The environment variable `[team]` reads the PostgreSQL connection string from unless it names another."""


class TeamSpec(BaseModel):
    """`[team]`: the LLM cache, the spend cap and the rate limits shared through one PostgreSQL database, so several
    processes (machines, shards) spend one budget under one set of limits and pay once per call.

    The connection string (it may carry a password) never sits in a file: the spec names the environment variable that
    holds it. Not in `result_fields`: where the cache and the cap live never changes a result.
    """

    model_config = _STRICT

    url_env: str = TEAM_URL_ENV
    """Name of the environment variable holding the PostgreSQL connection string (`postgresql://user@host/db`, or
    `postgresql://user@/db?host=/run/postgresql` over a Unix socket); never the URL itself."""
    budget: str = Field(default="default", min_length=1)
    """The shared spend cap's name: `max_cost` bounds what every process booking under this name spent together
    (name one per night or per sweep to cap each; the default is one budget for everything in the database)."""
    stale_s: float = Field(default=60.0, ge=1, le=3600, allow_inf_nan=False)
    """Seconds without a heartbeat (every twelfth of it) after which a process is dead: its calls in flight then count
    as spent at their worst case, and stop holding back the other processes' reservations."""
    outage_s: float = Field(default=300.0, ge=1, le=86400, allow_inf_nan=False)
    """Seconds the database may stay unreachable (a restart, a failover) while rollouts wait for it, sending nothing;
    past them, the rollouts waiting end `interrupted` and the same command runs them again."""


    @field_validator("url_env")
    @classmethod
    def _a_variable_name(cls, name: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # never echoed: it may be the URL, password and all
            raise ValueError("the name of an environment variable (letters, digits and _) that holds the "
                             "connection string, never the connection string itself")
        return name

MAX_SAMPLES = 10_000
"""Samples per (task, model, strategy) at most: far past any use; 10^9 is refused before it fills memory."""
MAX_DEPTH = 32
"""How deep a spec's values may nest (a benchmark's options included): deeper is a spec bomb, not a setting."""
MAX_ROLLOUTS = 10_000_000
"""Rollouts of one run at most (tasks x models x strategies x samples), checked before they are expanded."""


class RunSpec(BaseModel):
    """Everything that defines a run. Fields that change results are compared on resume (`result_fields`)."""

    model_config = _STRICT

    benchmark: str = Field(min_length=1)
    """Registry name (see `benchmarks.registry.available()`) or `module:attribute` import path of a Benchmark."""
    split: str | None = None
    """Split name (`train`, `validation`, `test`); exactly one of `split` and `queries`."""
    queries: str | None = None
    """Query file, relative to the spec file; its file name is the split in rollout keys."""
    tasks: list[str] | None = None
    """Only these task ids, in this order."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first N tasks (after `tasks`)."""
    models: list[ModelSpec] = Field(min_length=1)
    """Models under test."""
    strategies: list[str] = Field(min_length=1)
    """Strategy names of the benchmark."""
    samples: int = Field(default=1, ge=1, le=MAX_SAMPLES)
    """Rollouts per (task, model, strategy); each sample has its own cache entries."""
    sampling: Sampling = Sampling()
    """Default sampling parameters for every model."""
    max_calls: int | None = Field(default=None, ge=1)
    """LLM calls per rollout before the runner stops it as `call_limit` (benchmark step limits live in `options`)."""
    expected_calls: float | None = Field(default=None, gt=0)
    """Calls per rollout `--dry-run` assumes for uncached work (default: the run's mean so far, else max_calls)."""
    cache: CacheMode = Field(default=CacheMode.READWRITE, strict=False)  # strict mode would want the enum itself
    """Cache mode: `readwrite`, `replay`, `refresh` or `off`."""
    cache_dir: str | None = None
    """Cache directory, relative to the spec file (default: the user's tripbench cache)."""
    max_cost: float | None = Field(default=None, gt=0)
    """Spend cap in USD for the whole run, resumes included."""
    batch: BatchSetting = False
    """Whether models that do not say (`models[].batch`) go through their provider's batch API (`"planner"`: only
    the Planner's calls); each must have one (a model whose provider has none says `batch = false`: see
    `batch_models`)."""
    batch_size: int = Field(default=1000, ge=1)
    """A batch model's open batch is submitted once it holds this many requests (at most the provider's limit)..."""
    batch_flush_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """...or this many seconds after its first request joined it."""
    batch_poll_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """How often the state of a submitted batch is asked for."""
    batch_round_s: float = Field(default=1800.0, gt=0, allow_inf_nan=False)
    """How long `--dry-run` assumes a provider takes to process a batch, for its expected wall time (changes nothing
    of a run)."""
    concurrency: int = Field(default=64, ge=1)
    """Rollouts in flight, all models together."""
    processes: int | None = Field(default=None, ge=1)
    """Processes a replay (`cache = "replay"`) runs its rollouts in (`runner.engine.replay_processes`): unset, one
    per core when there are enough rollouts; 1, only the run's own. Changes no result: free to change on resume."""
    retry: RetrySpec = RetrySpec()
    """Retries of failed LLM calls."""
    evaluate: list[str] = ["official"]
    """Evaluator modes run on finished rollouts at the end of each session (empty: none)."""
    options: dict[str, Any] = {}
    """The benchmark's own options, validated by its `options_model`."""
    team: TeamSpec | None = None
    """Share the cache, spend cap and rate limits with other processes through PostgreSQL (unset: all local)."""

    @model_validator(mode="after")
    def _one_source_of_tasks(self) -> RunSpec:
        if (self.split is None) == (self.queries is None):
            raise ValueError("exactly one of split and queries")
        labels = [m.label for m in self.models]
        if len(set(labels)) != len(labels):
            raise ValueError("distinct model names (set name = ... to use one model twice)")
        if len(set(self.strategies)) != len(self.strategies):
            raise ValueError("distinct strategy names")
        return self

    @field_validator("tasks")
    @classmethod
    def _distinct_tasks(cls, tasks: list[str] | None) -> list[str] | None:
        if tasks is not None and len(set(tasks)) != len(tasks):
            twice = next(task for task, n in Counter(tasks).items() if n > 1)
            raise ValueError(f"distinct task ids ({twice!r} is given twice)")
        return tasks

    def result_fields(self) -> dict[str, Any]:
        """What a resumed run must keep equal: everything that changes a rollout's result.

        Task selection, models and strategies may grow (they only add rollouts); limits, caps, concurrency, retries
        and cache location may change freely. A model present in both specs must keep its provider string and sampling.
        """
        return {
            "benchmark": self.benchmark,
            "split": self.split,
            "queries": self.queries,
            "sampling": self.sampling.model_dump(),
            "max_calls": self.max_calls,
            "options": self.options,
            "models": {m.label: {"model": public_model(m.model), **m.over(self.sampling).model_dump()}
                       for m in self.models},
        }

    def public_dump(self) -> dict[str, Any]:
        """The spec as JSON values with no credential a URL carries: what the results store keeps of it."""
        dumped = self.model_dump(mode="json")
        for model in dumped["models"]:
            model["model"] = public_model(model["model"])
            if model.get("base_url"):
                model["base_url"] = public_url(model["base_url"])
        return dumped


def with_overrides(spec: RunSpec, overrides: Mapping[str, Any], source: str,
                   prices: PriceTable | None = None) -> RunSpec:
    """`spec` with some of its settings replaced (`--max-cost`, `--limit`), validated as the spec's own values are
    (`prices`: the price table an entry's `prices = "PROVIDER:NAME"` names, see `parse_spec`).

    Raises:
        ConfigError: an override the spec would refuse, naming `source` and the field.
    """
    if not overrides:
        return spec
    try:
        # fields already validated stay as they are
        return RunSpec.model_validate({**dict(spec), **overrides}, context=_context(prices))
    except ValidationError as exc:
        raise config_error(exc, RunSpec, source) from None


def batch_models(spec: RunSpec, source: str) -> dict[str, str | None]:
    """The model strings whose calls go through their provider's batch API (a model's `batch`, else the run's), each
    with the only stage of calls it batches (`providers.stages`; None: every call): what the run batches and the dry
    run prices at the batch rate.

    Raises:
        ConfigError: a model to batch whose provider has no batch API (`providers.registry.can_batch`), naming it; the
            run's `batch = true` too, for every model that does not say (such a model says `batch = false`).
    """
    batched: dict[str, str | None] = {}
    for position, model in enumerate(spec.models):
        if not (batch := spec.batch if model.batch is None else model.batch):
            continue
        if not can_batch(model.model):
            why = (f"for {public_model(model.model)}, whose provider has no batch API (only "
                   f"{' and '.join(f'{prefix}:' for prefix in BATCH_PROVIDERS)} models have one)")
            if model.batch:
                raise ConfigError(source, f"models[{position}].batch", f"false {why}", True)
            raise ConfigError(source, "batch", f"false, or batch = false on models[{position}] {why}", True)
        batched[model.model] = None if batch is True else batch
    return batched


def changed_fields(before: Any, after: Any, path: str = "") -> list[str]:
    """Dotted paths whose values differ between two `result_fields()` snapshots.

    Tables are compared key by key; under `models` only the models present in both count (adding or dropping
    a model only adds or leaves out rollouts).
    """
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [path] if before != after else []
    names = before.keys() & after.keys() if path == "models" else before.keys() | after.keys()
    return [changed for name in sorted(names)
            for changed in changed_fields(before.get(name), after.get(name), f"{path}.{name}" if path else name)]


def load_spec(path: Path, prices: PriceTable | None = None) -> RunSpec:
    """Reads and validates a run spec (`prices`: see `parse_spec`).

    Raises:
        ConfigError: unreadable file, bad TOML, or an invalid field (naming the file, field and what was expected).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), "(file)", "a readable TOML file", exc.strerror) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), "(syntax)", f"valid TOML ({exc})") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables by recursion
        raise ConfigError(str(path), "(syntax)", f"values nested at most {MAX_DEPTH} deep") from None
    if (deep := too_deep(data)) is not None:
        raise ConfigError(str(path), deep, f"values nested at most {MAX_DEPTH} deep")
    return parse_spec(data, str(path), prices)


def _context(prices: PriceTable | None) -> dict[str, PriceTable] | None:
    """The validation context that hands `_table_entry` a price table."""
    return {PRICES: prices} if prices is not None else None


def _walk(data: dict[str, Any]) -> Iterator[tuple[Any, str, int]]:
    """Every value of a spec read as a dict, the spec itself first, with its path and depth (without recursion:
    a caller stops at a value too deep before its children are reached)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        yield value, where, depth
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((item, f"{where}.{name}" if isinstance(name, str) and where else
                      name if isinstance(name, str) else f"{where}[{name}]", depth + 1) for name, item in items)


def too_deep(data: dict[str, Any]) -> str | None:
    """The path of the first value nested more than `MAX_DEPTH` deep, or None."""
    return next((where for _, where, depth in _walk(data) if depth > MAX_DEPTH), None)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Control characters (C0, DEL, C1): PostgreSQL's text refuses NUL, a path cannot hold it, and none belongs in a
name, a file name or a line of a terminal."""


def _unprintable(data: dict[str, Any], source: str) -> None:
    """Refuses a control character in any key or text of a spec, `[options]` included: the one check for every
    name that reaches the team database (`[team] budget`, model strings), a file name (labels, paths) or a message.

    Raises:
        ConfigError: naming the field (its control characters written as escapes) and the text.
    """
    for value, where, _ in _walk(data):
        if _CONTROL.search(where):  # a key: named as an escape, never printed raw
            field = _CONTROL.sub(lambda found: f"\\x{ord(found[0]):02x}", where)
            raise ConfigError(source, field, "a key of printable characters (no control character such as NUL)")
        if isinstance(value, str) and _CONTROL.search(value):
            raise ConfigError(source, where, "printable text (no control character such as NUL, a line break or a "
                              "tab)", value)


def parse_spec(data: dict[str, Any], source: str, prices: PriceTable | None = None) -> RunSpec:
    """Validates a spec already read as a dict (`too_deep` checked); `source` names it in errors, `prices` is the
    table a model's `prices = "PROVIDER:NAME"` is an entry of (None: the data home's, `load_price_table`)."""
    _unprintable(data, source)
    try:
        spec = RunSpec.model_validate(data, context=_context(prices))
    except ValidationError as exc:
        raise config_error(exc, RunSpec, source) from None
    require_agreement(spec.models, lambda model: model.model, CLIENT_FIELDS, source,
                      "which has the same model string (one client, one set of rate limits and prices serve both)")
    return spec


def require_agreement(models: Sequence[ModelSpec], group: Callable[[ModelSpec], object], fields: Iterable[str],
                      source: str, why: str) -> None:
    """Entries of one `group` must have equal `fields`.

    Raises:
        ConfigError: naming the entry, the first entry of its group, and the fields that differ with both values.
    """
    firsts: dict[object, int] = {}
    for position, model in enumerate(models):
        first = firsts.setdefault(group(model), position)
        differing = [name for name in fields if getattr(model, name) != getattr(models[first], name)]
        if differing:
            raise ConfigError(source, f"models[{position}]", f"{_Assignments(models[first], differing)} like "
                              f"models[{first}], {why}", _Assignments(model, differing))


def parse_options(model: type[BaseModel], options: dict[str, Any], source: str,
                  relative_to: Path | None = None) -> BaseModel:
    """Validates the spec's `[options]` table with the benchmark's options model; a relative path among its values
    (`data_dir`, `index`) is taken relative to `relative_to` (the spec file's folder), as `queries` and `cache_dir`."""
    try:
        parsed = model.model_validate(options)
    except ValidationError as exc:
        raise config_error(exc, model, source, prefix=("options",)) from None
    moved = {name: relative_to / value for name, value in parsed
             if relative_to is not None and isinstance(value, Path) and not value.is_absolute()}
    return parsed.model_copy(update=moved) if moved else parsed


class _Assignments:
    """Some fields of a model entry as a TOML file would set them (`rpm = 20, base_url unset`), in a ConfigError."""

    def __init__(self, model: ModelSpec, names: Sequence[str]) -> None:
        self.values = {name: getattr(model, name) for name in names}

    def __repr__(self) -> str:
        return ", ".join(f"{name} unset" if value is None else f"{name} = {_toml(value)}"
                         for name, value in self.values.items())

    __str__ = __repr__


def _toml(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{name} = {_toml(item)}" for name, item in value.items()) + " }"
    return json.dumps(value, default=str, ensure_ascii=False)
