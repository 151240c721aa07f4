"""`redact_secrets`: the one redaction of every message that may hold a connection string or an environment value.
Each case is one a user met (a password psycopg echoed, an API key a wrong `url_env` printed) or its neighbour."""

from __future__ import annotations

import pytest

from errors.redaction import REDACTED, redact_secrets, url_password

SECRET = "CANARY-pw-8841"


@pytest.mark.parametrize("text", [
    f"postgresql://tb:{SECRET}@db.internal/tripbench",
    f"cannot connect to postgresql://tb:{SECRET}%zz@db.internal/tripbench: invalid percent-encoded token",  # bad escape
    f'invalid URI "postgresql://tb:{SECRET} with space@db/tripbench" here',  # a space in the password
    f'end of string reached looking for "]": "postgresql://tb:{SECRET}@[::1/tripbench"',  # an unclosed IPv6 bracket
    f"postgresql://tb:{SECRET}@with@ats@db/tripbench?sslmode=require",  # an @ in the password
    f"postgresql://tb:{SECRET}/slash@db/tripbench",
    f"host=db user=tb password={SECRET} dbname=tripbench",
    f"host=db password='{SECRET} \\' quoted' dbname=tripbench",
    f"postgresql://tb@db/tripbench?sslmode=require&password={SECRET}&application_name=x",
    f"Traceback ...\npsycopg.ProgrammingError: postgresql://tb:{SECRET}@db/x\n",
])
def test_a_connection_strings_password_is_removed_however_malformed(text: str) -> None:
    shown = redact_secrets(text, environ={})
    assert SECRET not in shown and REDACTED in shown
    assert "tb" in shown or "db" in shown  # the rest stays readable


def test_the_value_of_a_secret_named_variable_is_removed_wherever_it_appears() -> None:
    environ = {"OPENAI_API_KEY": "sk-canary-123456", "HF_TOKEN": "hf_canary_token", "APP_SECRET": "shh-canary",
               "DB_PASSWORD": "pw canary 9", "PGPASSWORD": "pg-canary", "HOME": "/home/canary", "BATCH_KEY": "1"}
    text = ("missing \"=\" after \"sk-canary-123456\" in connection info string; hf_canary_token; shh-canary; "
            "pw canary 9; pg-canary; /home/canary; batch 1")
    shown = redact_secrets(text, environ=environ)
    assert [value for value in list(environ.values())[:5] if value in shown] == []
    assert "/home/canary" in shown  # not a secret's name
    assert "batch 1" in shown  # too short to be a secret: removing it would blank every "1"


def test_a_named_secret_is_removed_also_once_decoded() -> None:
    assert redact_secrets("password for p@ss w0rd failed", ["p%40ss%20w0rd"], environ={}) == (
        f"password for {REDACTED} failed")


def test_urls_without_credentials_and_ports_stay_as_they_are() -> None:
    for text in ("http://127.0.0.1:8080/v1 refused the call of toy@host", "postgresql://tb@db/tripbench",
                 "postgresql:///tripbench?host=/run/postgresql", "password authentication failed for user \"tb\""):
        assert redact_secrets(text, environ={}) == text


def test_url_password() -> None:
    assert url_password("postgresql://tb:p@ss word@db/x") == "p@ss word"
    assert url_password("postgresql://tb@db/x") is None
    assert url_password("postgresql:///x?host=/tmp") is None
