"""Golden cache keys: a release must not silently invalidate users' caches.

Each digest below was computed once and pinned. If one of these tests fails, the key recipe changed: that is only
acceptable together with a bump of `cache.keys.KEY_SCHEME` (and new digests), never by editing a digest alone.
"""

from __future__ import annotations

import hashlib

import pytest

from cache.keys import KEY_SCHEME, cache_key
from providers.interface import ChatRequest, Message

SYSTEM = Message("system", "You are a proficient planner.")
ASK = Message("user", "Plan a 3-day trip from Sarasota to Chicago, March 22nd to March 24th, 2022.")
REPLY = Message("assistant", "Thought 1: I need flights.\nAction 1: FlightSearch[Sarasota, Chicago, 2022-03-22]")
OPENAI = {"provider": "openai", "resolved_model": "gpt-4o-mini", "endpoint": "https://api.openai.com/v1/"}

CASES: list[tuple[str, ChatRequest, dict, str]] = [
    ("minimal", ChatRequest("openai:gpt-4o-mini", (ASK,)), OPENAI,
     "v1:0d428ecbc14fd0b18fb4a09e4a2497794d585bc9b688cdf961399d77377c3b3f"),
    ("system and user", ChatRequest("openai:gpt-4o-mini", (SYSTEM, ASK)), OPENAI,
     "v1:555c1751e1a2eedd89bfd6fe7242a9b0f62ef3bd30d8d37e8f193ffbd59e0d4f"),
    ("three turns", ChatRequest("openai:gpt-4o-mini", (SYSTEM, ASK, REPLY)), OPENAI,
     "v1:28ca402b9280e06f2dbd99813dac132efd9bd1cc313d1f009117bf6233fbdeeb"),
    ("temperature 0", ChatRequest("openai:gpt-4o-mini", (ASK,), temperature=0.0), OPENAI,
     "v1:fe4050be7d5551ef333c52d754fb8a4ae0a03317a9dadbbec7f395c49b45abc3"),
    ("sampling fields", ChatRequest("openai:gpt-4o-mini", (ASK,), temperature=0.7, top_p=0.9, max_tokens=512,
                                    seed=42), OPENAI,
     "v1:3dd9f5fd65f686b6a3de30020913071d6d577135d7da0e1bcdd6cf3617e74b54"),
    ("stop sequences", ChatRequest("openai:gpt-4o-mini", (ASK,), stop=("Observation", "\n\n")), OPENAI,
     "v1:4eb8e1e980ed82f3b216c0eb7d6b9f5f03a3dc9e656ac070c145036612e65f8f"),
    ("sample 1", ChatRequest("openai:gpt-4o-mini", (ASK,), temperature=1.0, sample=1), OPENAI,
     "v1:3b05efe4b82ea0bddfa6b345aef797952687b5d7bbd2998171873a36b2554401"),
    ("sample 2", ChatRequest("openai:gpt-4o-mini", (ASK,), temperature=1.0, sample=2), OPENAI,
     "v1:b20451911f8883db5bee9a9e87796518bfac6ac8093fb58cda2cfad2735381b4"),
    ("extras", ChatRequest("openai:gpt-4o-mini", (ASK,),
                           extras=(("frequency_penalty", 0.5), ("logit_bias", {"50256": -100}))), OPENAI,
     "v1:4439312751b53415ac5e3db0534b205d1784aadbd333442ac96bd3783cf9713c"),
    ("anthropic", ChatRequest("anthropic:claude-sonnet-4-5", (SYSTEM, ASK), max_tokens=4096),
     {"provider": "anthropic", "resolved_model": "claude-sonnet-4-5", "endpoint": "https://api.anthropic.com"},
     "v1:0cb3df1006f7501058fc6981c87e7ec12a9292fd95063a32af7cf241cfcee943"),
    ("openai-compatible", ChatRequest("openai-compatible:llama@http://127.0.0.1:8000/v1", (ASK,)),
     {"provider": "openai-compatible", "resolved_model": "llama", "endpoint": "http://127.0.0.1:8000/v1/"},
     "v1:859e23176a0c513b62628dc99f524dfdb8cf4ef6cf7c4e4f7eb1e53268d6b282"),
    ("no endpoint, unicode", ChatRequest("offline:oracle", (Message("user", "Zürich → São Paulo, 東京 🗺️"),)),
     {"provider": "offline", "resolved_model": "oracle", "endpoint": None},
     "v1:00ede25a7859a5bd380446022fafc92cbec1f6de4a240cd67fe9d2bdf548dd8c"),
]


@pytest.mark.parametrize(("request_", "identity", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_golden_digest(request_: ChatRequest, identity: dict, expected: str) -> None:
    assert cache_key(request_, **identity) == expected


def test_scheme_is_v1() -> None:
    # Bumping the scheme is the only legitimate way to change the digests above.
    assert KEY_SCHEME == "v1"


def test_digests_are_distinct() -> None:
    assert len({c[3] for c in CASES}) == len(CASES)


def test_recipe_spelled_out() -> None:
    # The recipe by hand, independent of `key_fields`: sha256 over sorted-keys compact JSON, prefixed `v1:`.
    canonical = (
        '{"endpoint":null,"extras":{},"max_tokens":null,"messages":[{"content":"hi","role":"user"}],'
        '"model":"oracle","provider":"offline","sample":0,"seed":null,"stop":[],"temperature":0.0,"top_p":null}'
    )
    request = ChatRequest("offline:oracle", (Message("user", "hi"),), temperature=0)
    expected = "v1:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert cache_key(request, provider="offline", resolved_model="oracle", endpoint=None) == expected
