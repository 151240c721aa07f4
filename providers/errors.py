"""Errors an LLM call can raise, one class per distinct reaction of the engine.

    LLMError                      anything an LLM call can raise; .provider .model
    ├── ProviderError             the provider failed; .status (int | None)
    │   ├── RetryableError        gateway retries, bounded, jittered
    │   │   ├── RateLimited       429; .retry_after (seconds | None) is honoured
    │   │   ├── ServerError       5xx, malformed body, dropped connection
    │   │   │   └── NotSent       no connection was made (refused, DNS failure): nothing left this machine
    │   │   └── ProviderTimeout   also a TimeoutError
    │   └── PermanentError        never retried
    │       ├── AuthError         401/403: ends the run, not only the rollout
    │       │   └── MissingAPIKey  the key's environment variable is unset (also a runner UserError)
    │       ├── BadRequest        400/404/422, content filter
    │       └── ContextTooLong    → rollout status "token_limit"
    ├── BudgetExhausted           the next call would pass the spend cap → status "budget_exhausted"
    └── ReplayMiss                cache mode replay and no entry; carries the key

No message carries an API key or request headers.
"""

from __future__ import annotations

from typing import TypedDict

from errors import UserError


class Where(TypedDict):
    """The keyword arguments that say where an error came from, unpacked into any class below."""

    provider: str
    model: str


class WhereStatus(Where):
    """`Where`, with the HTTP status of the response that failed."""

    status: int | None


class LLMError(Exception):
    """Anything an LLM call can raise."""

    def __init__(self, message: str, *, provider: str = "", model: str = "") -> None:
        super().__init__(message)
        self.provider = provider
        self.model = model


class ProviderError(LLMError):
    """The provider failed."""

    def __init__(self, message: str, *, status: int | None = None, provider: str = "", model: str = "") -> None:
        super().__init__(message, provider=provider, model=model)
        self.status = status


class RetryableError(ProviderError):
    """Worth retrying: the gateway does, bounded and with jitter."""


class RateLimited(RetryableError):
    """HTTP 429; `retry_after` (seconds) is honoured when the server sent it."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = 429,
                 provider: str = "", model: str = "") -> None:
        super().__init__(message, status=status, provider=provider, model=model)
        self.retry_after = retry_after


class ServerError(RetryableError):
    """5xx, a malformed body or a dropped connection."""


class NotSent(ServerError):
    """No connection to the server could be made (refused, a DNS failure, connecting timed out): the request never
    left this machine, so it cannot have been billed."""


class ProviderTimeout(RetryableError, TimeoutError):
    """The call timed out."""


class PermanentError(ProviderError):
    """Never retried."""


class AuthError(PermanentError):
    """401/403: the key is missing or wrong; ends the run."""


class MissingAPIKey(AuthError, UserError):
    """The environment variable holding the key is unset; a user error too, so the CLI prints one line."""

    def __init__(self, variable: str, *, provider: str = "", model: str = "") -> None:
        super().__init__(f"{provider or 'the provider'} needs an API key: set the environment variable {variable}",
                         provider=provider, model=model)
        self.variable = variable


class BadRequest(PermanentError):
    """400/404/422 or a content filter refusal."""


class ContextTooLong(PermanentError):
    """The prompt does not fit the model's context window."""


class BudgetExhausted(LLMError):
    """The next call would pass the run's spend cap."""


class ReplayMiss(LLMError):
    """Cache mode `replay` and no stored entry for this request."""

    def __init__(self, message: str, *, key: str, provider: str = "", model: str = "") -> None:
        super().__init__(message, provider=provider, model=model)
        self.key = key
