"""The price table (`PriceTable`: `cost_usd(usage, model)`): USD per million tokens, online and through the batch APIs.

The table is a snapshot of LiteLLM's maintained price list (`model_prices.json` beside this module: every chat
model it prices, with cached-input and batch rates), refreshed from upstream by `tripbench prices update` into the
data home. Keys are `PROVIDER:NAME` in LiteLLM's provider names. For `openai:` and `anthropic:` those are the model
strings users write (`openai:gpt-4o-mini`); a dated snapshot such as `openai:gpt-4o-mini-2024-07-18` or
`anthropic:claude-sonnet-4-5-20250929` falls back to its undated entry. The other providers' entries
(`together_ai:meta-llama/...`, `deepinfra:...`) price an `openai-compatible:` server's model when its spec entry
names one (`prices = "together_ai:..."`, see `entry`), since the server behind a URL cannot be told from its model
name. A run spec can override or add prices (`overrides`), including a `PREFIX:*` wildcard such as
`{"openai-compatible:*": Price(input=0, output=0)}`. An `openai-compatible:` server on the user's own machines
(localhost, a private address: `LOCAL_PRICE`) costs 0 unless told otherwise, and a provider that never bills
(`offline:`, see `OFFLINE`) is free; other unknown models cost None (unknown), never a guessed 0.

A table is a value (`PriceTable`): `load_price_table(home)` reads the one a data home holds, else the bundled
snapshot, and whatever prices calls is given it (a run loads it once where it is prepared, `runner.engine.prepared`),
so a library caller and the command line price the same run alike, and two runs of one process over two data homes
each see their own.
"""

from __future__ import annotations

import difflib
import functools
import ipaddress
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from datahome import price_table_path
from errors import DataError
from providers.interface import Usage
from providers.registry import BUILTINS


class Price(BaseModel):
    """What one model charges, USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    """Uncached prompt tokens."""
    cached_input: float | None = Field(default=None, ge=0)
    """Prompt tokens read from the provider's prompt cache; None means billed as `input`."""
    output: float = Field(ge=0)
    """Completion tokens (reasoning tokens included: providers bill them as output)."""
    batch_input: float | None = Field(default=None, ge=0)
    """Prompt tokens sent through the batch API; None: `input` less `batch_discount`."""
    batch_output: float | None = Field(default=None, ge=0)
    """Completion tokens through the batch API; None: `output` less `batch_discount`."""
    deprecation_date: date | None = None
    """The day the provider shuts the model down (LiteLLM's `deprecation_date`): after it, only a cache or a pack
    can answer its calls (`retirement_note`)."""
    batch_discount: float = Field(default=0.5, ge=0, le=1)
    """Fraction taken off the rates a batch rate is not given for: both batch APIs (OpenAI's, Anthropic's) take half
    off, so a price written without batch rates bills batch calls at half."""

    def rates(self, batch: bool = False) -> tuple[float, float, float]:
        """(input, cached input, output) per million tokens, online or through the batch API."""
        cached = self.input if self.cached_input is None else self.cached_input
        if not batch:
            return self.input, cached, self.output
        factor = 1.0 - self.batch_discount
        batch_input = self.input * factor if self.batch_input is None else self.batch_input
        batch_output = self.output * factor if self.batch_output is None else self.batch_output
        # the cached rate falls as the input rate does (both providers halve it)
        cached_share = cached / self.input if self.input else 1.0
        return batch_input, batch_input * cached_share, batch_output


LITELLM_URL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"
"""The maintained upstream of the bundled table: LiteLLM's price list (MIT, Copyright (c) 2023 Berri AI)."""
BUNDLED = Path(__file__).with_name("model_prices.json")
"""The snapshot shipped with tripbench (`tripbench prices update` writes a fresher one into the data home)."""
_PROVIDERS = tuple(prefix for prefix, provider in BUILTINS.items() if provider.priced)
"""The built-in providers whose model strings (`openai:NAME`, `anthropic:NAME`) are the table's own keys: a file
without their prices is not LiteLLM's list, and a model name several providers sell is suggested as theirs."""


def from_litellm(data: Mapping[str, Any], source: str) -> PriceTable:
    """The priced chat models in LiteLLM's `model_prices_and_context_window.json` (USD per token:
    `input_cost_per_token`, `output_cost_per_token`, `cache_read_input_token_cost`, `*_batches`), keyed
    `PROVIDER:NAME` with LiteLLM's provider and the name without its `PROVIDER/` prefix.

    Raises:
        DataError: the data is not that file (no priced OpenAI and Anthropic chat model in it).
    """
    models: dict[str, Price] = {}
    # A name without the prefix first: `gpt-4o` is OpenAI's own entry, `openai/gpt-4o` an alias that may differ.
    for name, entry in sorted(data.items(), key=lambda item: _has_prefix(*item)):
        if not isinstance(entry, dict) or entry.get("mode") != "chat" or not isinstance(entry.get("litellm_provider"),
                                                                                         str):
            continue
        provider = entry["litellm_provider"]
        key = f"{provider}:{name.removeprefix(f'{provider}/')}"
        rates = {field: _per_million(entry.get(field_key)) for field, field_key in _LITELLM_FIELDS.items()}
        if key in models or rates["input"] is None or rates["output"] is None:
            continue
        try:
            models[key] = Price(**{k: v for k, v in rates.items() if v is not None},
                                deprecation_date=_date(entry.get("deprecation_date")))
        except ValidationError:
            continue  # a negative or malformed rate: the model stays unknown
    if not all(any(model.startswith(f"{p}:") for model in models) for p in _PROVIDERS):
        raise DataError(f"{source}: not LiteLLM's price list: no priced chat model of {' and '.join(_PROVIDERS)}")
    return PriceTable(source, dict(sorted(models.items())))


_LITELLM_FIELDS = {"input": "input_cost_per_token", "cached_input": "cache_read_input_token_cost",
                   "output": "output_cost_per_token", "batch_input": "input_cost_per_token_batches",
                   "batch_output": "output_cost_per_token_batches"}


def _has_prefix(name: str, entry: object) -> bool:
    return isinstance(entry, dict) and name.startswith(f"{entry.get('litellm_provider')}/")


def _date(value: object) -> date | None:
    """LiteLLM's `deprecation_date` (`YYYY-MM-DD`); anything else is no date."""
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _per_million(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(value * 1_000_000, 9)  # per token -> per million, without the float noise of the product


def read_table(path: Path) -> PriceTable:
    """A table `write_table` wrote.

    Raises:
        DataError: the file is unreadable or not such a table.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return PriceTable(str(data["source"]), {model: Price(**price) for model, price in data["models"].items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path}: not a tripbench price table ({type(exc).__name__}: {exc})") from None


def write_table(table: PriceTable, path: Path) -> None:
    """Writes `table` as JSON, atomically (a reader never sees half a file)."""
    rows = ",\n".join(f"  {json.dumps(model)}: {json.dumps(price.model_dump(mode='json', exclude_defaults=True))}"
                      for model, price in table.models.items())  # one model a line: diffs stay readable
    text = (f'{{"source": {json.dumps(table.source)},\n "license": {json.dumps(LICENSE)},\n'
            f' "models": {{\n{rows}\n}}}}\n')
    partial = path.with_suffix(".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


LICENSE = "LiteLLM's price list: MIT License, Copyright (c) 2023 Berri AI"


@functools.cache
def bundled_table() -> PriceTable:
    """The snapshot shipped with tripbench, read once (it does not change under a running process)."""
    return read_table(BUNDLED)


def load_price_table(home: str | os.PathLike[str] | None = None) -> PriceTable:
    """The price table of the data home `home` (default: `datahome.default_home()`): the one `tripbench prices
    update` wrote there, else the bundled snapshot; read now, not kept (a table updated since is read next time).

    Raises:
        DataError: the data home's table is unreadable or not a price table.
    """
    path = price_table_path(home)
    return read_table(path) if path.is_file() else bundled_table()


# A snapshot date at the end of a model id: OpenAI writes `-2024-07-18`, Anthropic `-20250929`.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


FREE = Price(input=0.0, output=0.0)
OFFLINE = "offline"
"""The prefix of the offline models (`benchmarks.offline`): they cost nothing whatever the tables say, since no
provider bills them."""

LOCAL_PRICE = Price(input=0.0, output=0.0)
"""What an `openai-compatible:` server on the user's own machines costs per token unless a spec says otherwise."""

RETIRING_DAYS = 60
"""A model shut down within this many days is named before a run (its answers may soon come only from a cache)."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model string, and where they come from (`load_price_table`)."""

    source: str
    models: dict[str, Price]

    def price_for(self, model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
        """The price of `model`: an override (exact, then `PREFIX:*`), else this table (exact, then undated).

        Args:
            model: model string as the user wrote it, e.g. `anthropic:claude-haiku-4-5`.
            overrides: prices from the run spec, which win over the table.

        Returns:
            The price, or None when nobody knows it.
        """
        prefix = model.split(":", 1)[0]
        if prefix == OFFLINE:
            return FREE
        for table in (overrides or {}, self.models):
            found = table.get(model) or table.get(_SNAPSHOT.sub("", model))
            if found is None and table is not self.models:
                found = table.get(f"{prefix}:*")
            if found is not None:
                return found
        return LOCAL_PRICE if prefix == "openai-compatible" and _on_own_machines(model) else None

    def nearest(self, model: str) -> str | None:
        """The table's model string closest to an unknown `model` (a typo: `openai:gpt-4o-mni`), if one is close; a
        name without its provider (`claude-sonet-4-5`) is compared with the table's names without theirs."""
        candidates: dict[str, str] = {}  # what is compared -> the model string it stands for
        if ":" in model:
            prefix = model.split(":", 1)[0]
            candidates = {known: known for known in self.models if known.startswith(f"{prefix}:")}
        else:  # a name several providers sell stands for the one tripbench runs (openai:, not azure:), else the first
            for known in sorted(self.models, key=lambda known: known.partition(":")[0] not in _PROVIDERS):
                candidates.setdefault(known.partition(":")[2], known)
        close = difflib.get_close_matches(model, list(candidates), n=1, cutoff=0.85)
        return candidates[close[0]] if close else None

    def cost_usd(self, usage: Usage, model: str, *, overrides: Mapping[str, Price] | None = None,
                 batch: bool = False) -> float | None:
        """What a call cost in USD, or None if the model's price is unknown.

        Args:
            usage: tokens billed; `cached_input_tokens` is the part of `input_tokens` billed at the cached rate.
            model: model string as the user wrote it.
            overrides: prices from the run spec (see `price_for`).
            batch: the call went through the provider's batch API.

        Returns:
            The cost in USD (0.0 for a zero usage), or None for an unknown model.
        """
        price = self.price_for(model, overrides)
        return None if price is None else cost_at(usage, price, batch=batch)

    def retirement_note(self, model: str, today: date, *, replay: bool = False,
                        overrides: Mapping[str, Price] | None = None) -> str | None:
        """What to say before a run of `model` when its provider shut it down or will within `RETIRING_DAYS`, by
        the table's `deprecation_date`; None otherwise. `replay`: the run answers from the cache already."""
        price = self.price_for(model, overrides)
        if price is None or price.deprecation_date is None:
            return None
        when = price.deprecation_date
        if when <= today:
            return (f"{model} was shut down on {when}: only a cache or a pack can answer it"
                    + ("" if replay else '; run with cache = "replay"'))
        if (when - today).days <= RETIRING_DAYS:
            return (f"{model} will be shut down on {when} (in {(when - today).days} days): after it, only a cache or "
                    "a pack can answer it; `tripbench pack RUN_DIR` keeps a run's answers")
        return None


def _on_own_machines(model: str) -> bool:
    """Whether `openai-compatible:NAME@URL` reaches a server of the user's own: localhost, a loopback or private
    address, or a host name without a dot (a machine on the local network, a container's service name)."""
    host = urlsplit(model.partition("@")[2]).hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith(".localhost") or (bool(host) and "." not in host)
    return address.is_loopback or address.is_private


def cost_at(usage: Usage, price: Price, *, batch: bool = False) -> float:
    """What a call cost in USD at a price already looked up (the gateway looks each model's up once)."""
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    input_rate, cached_rate, output_rate = price.rates(batch)
    per_million = (usage.input_tokens - cached) * input_rate + cached * cached_rate + usage.output_tokens * output_rate
    return per_million / 1_000_000
