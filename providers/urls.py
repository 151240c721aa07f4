"""Base URLs that may carry secrets (`http://user:pass@host/v1`, `…/v1?api_key=…`): what is sent, what is shown.

A URL's credentials travel to its server and nowhere else. `public_url` is the form everything else sees: cache keys,
rate-limit buckets, run specs stored in results, labels, reports, output folders, logs and error messages. It drops
the userinfo and every query parameter whose name looks secret, so a new password neither leaks nor misses the whole
cache. `Endpoint.parse` splits a URL into what a client needs to send it: the URL without userinfo or query, the query
(which the SDKs cannot take inside a base URL), and the userinfo as HTTP Basic credentials.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)
"""Query parameter names treated as secrets (`api_key`, `api-key`, `apikey`, `key`, `access_token`, `sig`, ...)."""

_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s?#@]*@", re.IGNORECASE)
_SECRET_QUERY = re.compile(r"([?&][^=&\s#]*(?:key|token|secret|passw|pwd|auth|sig|credential|session)[^=&\s#]*=)"
                           r"[^&\s#]*", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether a query parameter's name looks like it holds a credential."""
    return bool(_SECRET_NAME.search(name))


def public_url(url: str) -> str:
    """`url` without userinfo and without query parameters whose names look secret; unchanged if it has neither."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    query = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True)
             if not is_secret_name(name)]
    if host == parts.netloc and len(query) == len(parse_qsl(parts.query, keep_blank_values=True)):
        return url
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query), parts.fragment))


def public_model(model: str) -> str:
    """A model string with the URL of `openai-compatible:NAME@URL` made public; other strings unchanged."""
    prefix, at, url = model.partition("@")
    return f"{prefix}@{public_url(url)}" if at and "://" in url else model


def redact_urls(text: str) -> str:
    """Every URL's userinfo and secret-looking query values removed from free text (error messages, logs)."""
    return _SECRET_QUERY.sub(r"\1[redacted]", _USERINFO.sub(r"\1", text))


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A base URL split into what a client sends."""

    url: str
    """Without userinfo and query: what the SDK is given as its base URL."""
    query: dict[str, str]
    """Query parameters to send with every request (credentials among them)."""
    basic_auth: str | None
    """`Basic …` header value from the URL's userinfo, else None."""

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        userinfo, at, host = parts.netloc.rpartition("@")
        auth = None
        if at:
            user, _, password = userinfo.partition(":")
            token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
            auth = f"Basic {token}"
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        return cls(urlunsplit((parts.scheme, host, parts.path, "", "")), query, auth)

    def identity(self, base: str) -> str:
        """The public form of this endpoint, given `base` (the URL as the SDK normalised it): the query parameters
        that are not secrets stay, since they may change what the server does."""
        public = urlencode([(name, value) for name, value in self.query.items() if not is_secret_name(name)])
        return f"{base}?{public}" if public else base
