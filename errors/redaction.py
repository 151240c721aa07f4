"""Secrets out of any text we show: the one redaction every error path that may hold a connection string or an
environment value goes through (the team database's messages, the CLI's top-level error printing).

It removes the password of any URL (`scheme://user:PASSWORD@host`, malformed ones too: a bad %-escape, a space, an
unclosed IPv6 bracket, an `@` or `/` in the password), `password=...` parameters (libpq keyword/value strings, URL
queries), the value of every environment variable whose name says it holds a secret (`..._KEY`, `..._TOKEN`,
`..._SECRET`, `..._PASSWORD`, libpq's `PGPASSWORD`) wherever it appears, and any secret the caller names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

REDACTED = "[redacted]"

MIN_SECRET = 4
"""Values shorter than this are left alone: a `FOO_KEY=1` would otherwise blank every digit 1 of a message (no real
key or password is that short, and a URL's password is removed by its place, whatever its length)."""

SECRET_VARIABLE = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD)$|^PGPASSWORD$", re.IGNORECASE)
"""Names of environment variables whose values are secrets (`OPENAI_API_KEY`, `HF_TOKEN`, `DB_PASSWORD`, ...)."""

# scheme://user:PASSWORD@: the password runs to the first `@`, on through the `@`s of its last word (it may hold
# `@`, `/`, `?`, spaces or a broken %-escape); ending it too late only hides more of the message, never a password.
# Digits then the end of the authority are a port (`http://host:8080/v1 ... a@b` keeps its path).
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/?#@\s\[\]]*:)(?!\d+(?:[/?#\s]|$))[^@\n]*@(?:[^@\s]*@)*",
                           re.IGNORECASE)
# password=VALUE in a keyword/value string or a URL's query: quoted (with backslash escapes) or up to a space or `&`.
_PASSWORD_PARAMETER = re.compile(r"(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|[^\s&'\"]+)", re.IGNORECASE)


def is_secret_variable(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return bool(SECRET_VARIABLE.search(name))


def redact_secrets(text: str, secrets: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> str:
    """`text` with every secret it may hold replaced by `[redacted]` (see the module's docstring).

    Args:
        text: A message, a traceback, anything about to be shown or written.
        secrets: Values known to be secret here (a connection string's password), removed wherever they appear.
        environ: The environment whose secret-named variables' values are removed (default: this process's).
    """
    environ = os.environ if environ is None else environ
    values = {value for name, value in environ.items() if is_secret_variable(name)} | set(secrets)
    values |= {unquote(value) for value in values}  # as a message may show it once decoded
    for value in sorted((value.strip() for value in values if len(value.strip()) >= MIN_SECRET), key=len,
                        reverse=True):  # the longest first: a secret holding another is removed whole
        text = text.replace(value, REDACTED)
    text = _URL_PASSWORD.sub(rf"\1{REDACTED}@", text)
    return _PASSWORD_PARAMETER.sub(rf"\1{REDACTED}", text)


def url_password(url: str) -> str | None:
    """The password of `scheme://user:password@host...` as written (its last `@` ends it), None without one; for
    `redact_secrets(..., secrets=...)`, which then finds it in a message that shows it without its URL."""
    _, sep, rest = url.partition("://")
    userinfo, at, _ = rest.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return password if sep and at and colon and password else None
