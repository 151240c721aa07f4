"""The pure parts of error mapping: Retry-After forms, the status table, key redaction and fingerprints."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from providers.errors import AuthError, ContextTooLong, RateLimited
from providers.http_errors import error_for_status, retry_after_s
from providers.keys import key_digest, redact


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "1.5"}, 1.5),
    ({"retry-after-ms": "250", "retry-after": "1"}, 0.25),  # the precise header wins
    ({"retry-after-ms": "soon", "retry-after": "2"}, 2.0),
    ({"retry-after": "-4"}, 0.0),
    ({"retry-after": "whenever"}, None),
    ({}, None),
])
def test_retry_after_forms(headers, expected) -> None:
    assert retry_after_s(headers) == expected


def test_retry_after_as_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    assert 28 <= retry_after_s({"retry-after": format_datetime(when, usegmt=True)}) <= 30


def test_status_table_extras() -> None:
    error = error_for_status(429, "slow down", headers={"retry-after": "2"}, provider="openai", model="m")
    assert isinstance(error, RateLimited) and error.retry_after == 2.0
    error = error_for_status(400, "too long", headers={}, provider="openai", model="m", context_too_long=True)
    assert isinstance(error, ContextTooLong) and error.status == 400
    assert str(error) == "openai:m: HTTP 400: too long"


def test_server_messages_lose_keys_and_length() -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz"
    message = f"Incorrect API key provided: {key}. " + "x" * 1000
    error = error_for_status(401, message, headers={}, provider="openai", model="m", secret=key)
    assert isinstance(error, AuthError) and key not in str(error) and len(str(error)) <= 300
    assert "[redacted]" in str(error)


def test_redact_removes_the_secret_and_key_shaped_text() -> None:
    assert redact("token=local-secret-42 used", "local-secret-42") == "token=[redacted] used"
    assert redact("bad key sk-ant-api03-XYZ123 and sk-abc****wxyz") == "bad key [redacted] and [redacted]"
    assert redact("nothing to see") == "nothing to see"


def test_key_digest_is_short_stable_and_distinct() -> None:
    assert key_digest("sk-a") == key_digest("sk-a") != key_digest("sk-b")
    assert len(key_digest("sk-a")) == 12 and "sk-a" not in key_digest("sk-a")
