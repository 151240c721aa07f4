"""What of a base URL is sent and what is shown: credentials go to the server, never into anything written."""

from __future__ import annotations

import base64

import pytest

from providers.keys import redact
from providers.urls import Endpoint, public_model, public_url, redact_urls


@pytest.mark.parametrize(("url", "public"), [
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),  # nothing secret: unchanged, so cache keys stay
    ("http://user:pass@host:8000/v1", "http://host:8000/v1"),
    ("http://token@host/v1", "http://host/v1"),
    ("https://host/v1?api_key=abc&api-version=2024-02", "https://host/v1?api-version=2024-02"),
    ("https://host/v1?key=a&apikey=b&access_token=c&sig=d&Password=e&X-Auth=f", "https://host/v1"),
    ("https://u:p@host/v1?mode=fast&token=t", "https://host/v1?mode=fast"),
])
def test_public_url_drops_userinfo_and_secret_looking_query_parameters(url: str, public: str) -> None:
    assert public_url(url) == public


def test_public_model_cleans_only_the_url_of_a_compatible_model_string() -> None:
    assert public_model("openai-compatible:llama@http://u:p@h/v1?key=k") == "openai-compatible:llama@http://h/v1"
    assert public_model("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    assert public_model("offline:oracle") == "offline:oracle"


def test_free_text_loses_every_url_credential() -> None:
    text = "connection failed: http://alice:s3cret@proxy:3128/v1/chat?api_key=XYZ&mode=1 (and https://bob@h/x)"
    assert redact_urls(text) == ("connection failed: http://proxy:3128/v1/chat?api_key=[redacted]&mode=1 "
                                 "(and https://h/x)")
    assert "s3cret" not in redact(text) and "XYZ" not in redact(text)


def test_an_endpoint_splits_into_what_is_sent() -> None:
    endpoint = Endpoint.parse("http://us%40er:p%3Ass@host:9/v1?api_key=K&mode=fast")
    assert endpoint.url == "http://host:9/v1" and endpoint.query == {"api_key": "K", "mode": "fast"}
    assert endpoint.basic_auth == "Basic " + base64.b64encode(b"us@er:p:ss").decode()
    assert endpoint.identity("http://host:9/v1/") == "http://host:9/v1/?mode=fast"
    assert Endpoint.parse("http://host/v1").basic_auth is None
