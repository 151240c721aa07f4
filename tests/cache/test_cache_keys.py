"""What goes into a cache key and what never does."""

from __future__ import annotations

import dataclasses

from cache.keys import REQUEST_FIELDS_IN_KEY, REQUEST_FIELDS_REPLACED, cache_key, key_fields
from providers.interface import ChatRequest, Message
from providers.openai_chat import OpenAIChat

ASK = (Message("user", "Plan a trip to Chicago."),)
IDENTITY = {"provider": "openai", "resolved_model": "gpt-4o-mini", "endpoint": None}


def key(request: ChatRequest, **identity: object) -> str:
    return cache_key(request, **{**IDENTITY, **identity})  # type: ignore[arg-type]


def test_every_request_field_is_decided() -> None:
    # A field added to ChatRequest fails here until someone decides whether it changes the output.
    names = {f.name for f in dataclasses.fields(ChatRequest)}
    assert names == set(REQUEST_FIELDS_IN_KEY) | set(REQUEST_FIELDS_REPLACED)
    fields = key_fields(ChatRequest("openai:x", ASK), **IDENTITY)  # type: ignore[arg-type]
    assert set(REQUEST_FIELDS_IN_KEY) <= set(fields)


def test_each_output_changing_field_changes_the_key() -> None:
    base = ChatRequest("openai:gpt-4o-mini", ASK)
    variants = [
        dataclasses.replace(base, messages=(Message("user", "Plan a trip to Boston."),)),
        dataclasses.replace(base, messages=(Message("system", "Plan a trip to Chicago."),)),
        dataclasses.replace(base, temperature=0.5),
        dataclasses.replace(base, top_p=0.5),
        dataclasses.replace(base, max_tokens=100),
        dataclasses.replace(base, stop=("Observation",)),
        dataclasses.replace(base, seed=1),
        dataclasses.replace(base, sample=1),
        dataclasses.replace(base, extras=(("presence_penalty", 0.1),)),
    ]
    keys = {key(base)} | {key(v) for v in variants}
    keys |= {key(base, provider="openai-compatible"), key(base, resolved_model="gpt-4o"),
             key(base, endpoint="http://127.0.0.1:8000/v1/")}
    assert len(keys) == 1 + len(variants) + 3


def test_spelling_of_the_model_string_and_of_numbers_does_not_matter() -> None:
    # The user's string is replaced by what it resolves to; 1 and 1.0 are one temperature.
    a = ChatRequest("openai:gpt-4o-mini", ASK, temperature=1, top_p=1)
    b = ChatRequest("openai:gpt-4o-mini-alias", ASK, temperature=1.0, top_p=1.0)
    assert key(a) == key(b)


def test_k_samples_make_k_keys() -> None:
    keys = {key(ChatRequest("openai:gpt-4o-mini", ASK, temperature=1.0, sample=i)) for i in range(5)}
    assert len(keys) == 5


def test_api_key_and_timeout_never_reach_the_key() -> None:
    # Two providers for one model differing only in key and timeout: same identity, same key, and the secret
    # appears nowhere in what is hashed.
    secret_a, secret_b = "sk-test-aaaaaaaaaaaaaaaa", "sk-test-bbbbbbbbbbbbbbbb"
    a = OpenAIChat("gpt-4o-mini", api_key=secret_a, timeout_s=5.0)
    b = OpenAIChat("gpt-4o-mini", api_key=secret_b, timeout_s=600.0)
    request = ChatRequest("openai:gpt-4o-mini", ASK)
    keys = [cache_key(request, provider=m.provider, resolved_model=m.model, endpoint=m.endpoint) for m in (a, b)]
    assert keys[0] == keys[1]
    fields = key_fields(request, provider=a.provider, resolved_model=a.model, endpoint=a.endpoint)
    assert secret_a not in repr(fields) and "timeout" not in repr(fields)


def test_key_is_pure_and_shaped() -> None:
    request = ChatRequest("openai:gpt-4o-mini", ASK, extras=(("b", 1), ("a", [1, 2])))
    reordered = ChatRequest("openai:gpt-4o-mini", ASK, extras=(("a", [1, 2]), ("b", 1)))
    assert key(request) == key(request) == key(reordered)
    scheme, _, hexdigest = key(request).partition(":")
    assert scheme == "v1" and len(hexdigest) == 64 and int(hexdigest, 16) >= 0
