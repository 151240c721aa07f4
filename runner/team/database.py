"""The team database: the connection string from the environment, the schema and its migrations.

The spec names the environment variable (`[team] url_env`); the URL itself, which may carry a password, is never
written anywhere, and every message about the database passes through `errors.redaction` (no password, no secret
environment value). Every table and function is prefixed `tb_`, so the database may hold other things.

Least privilege: `tripbench team init`, as the database's owner, creates or migrates the schema (under an advisory
lock, so processes starting together migrate once). A run and `team status` only read the schema's version, so they
work for a user granted DML alone; a run on an empty database still creates the schema when its user may (the owner),
but never needs to. Like the SQLite cache, the database records the cache key scheme it was written with and a
tripbench using another scheme refuses it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Literal

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict

from cache import KEY_SCHEME
from errors import ConfigError, DataError, Interruption
from errors.redaction import redact_secrets, url_password

MIGRATION_LOCK = 0x7472_6970  # "trip": pg_advisory_xact_lock's key for migrations

Purpose = Literal["run", "read", "init"]
"""What a connection is for: `run` (DML on every table; the schema created on an empty database if this user may),
`read` (`team status`: SELECT only, never DDL), `init` (`team init`: create or migrate the schema)."""

INIT_HINT = "run `tripbench team init` as the database's owner"

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSTGRES_URL = re.compile(r"postgres(?:ql)?://", re.IGNORECASE)
_KEYWORD_VALUE = re.compile(r"\s*[a-z_]+\s*=", re.IGNORECASE)  # libpq's `host=... dbname=...` form


class TeamUnavailable(Interruption, ConnectionError):
    """The team database cannot be reached or used: nothing is sent (fail closed).

    An `Interruption`: a rollout it ends is `interrupted`, and the same command runs it again (`runner.outcomes`);
    `retry_after_s` is set while the outage is within its limit (`runner.team.link.Outage`)."""


def team_url(url_env: str, source: str = "run spec") -> str:
    """The connection string the variable named by `[team] url_env` holds; no message shows the variable's value.

    Raises:
        ConfigError: the name is not a variable's (a URL given instead), or the variable is unset, empty or holds no
            PostgreSQL connection string libpq can parse.
    """
    if not _VARIABLE_NAME.fullmatch(url_env):
        raise ConfigError(source, "team.url_env", "the NAME of the environment variable holding the team database's "
                          "URL (letters, digits and _, e.g. TRIPBENCH_TEAM_URL), not the URL itself (not shown here)")
    url = os.environ.get(url_env, "").strip()
    if not url:
        raise ConfigError(source, "team.url_env", f"the environment variable {url_env} to hold the team database's "
                          "PostgreSQL URL (e.g. postgresql://tb@db.internal/tripbench); it is unset")
    if (problem := _unparsable(url)) is not None:
        raise ConfigError(source, "team.url_env", f"the environment variable {url_env} to hold the team database's "
                          f"PostgreSQL URL (e.g. postgresql://tb@db.internal/tripbench); {problem} (its value is not "
                          "shown: it may be a secret)")
    return url


def _unparsable(url: str) -> str | None:
    """What makes `url` no connection string libpq takes, in words that quote none of it; None when it parses."""
    if not _POSTGRES_URL.match(url) and not _KEYWORD_VALUE.match(url):
        return "it holds something else (not postgresql://...)"
    try:
        conninfo_to_dict(url)
    except (psycopg.Error, ValueError) as exc:  # libpq's message quotes the string: only its kind is told
        message = str(exc)
        if "spaces" in message:
            return "it holds a space (write it as %20)"
        if "percent" in message:
            return ("it has an invalid %-escape (write a %, @, /, : or space of the password as %25, %40, %2F, %3A "
                    "or %20)")
        if "IPv6" in message:
            return "its IPv6 host address has no closing ]"
        return "libpq cannot parse it"
    return None


def public(url: str) -> str:
    """A connection string without its password (for messages), malformed ones too; a keyword/value string shows
    only `the team database`."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme.lower().startswith("postgres"):
        return "the team database"
    userinfo, at, rest = rest.rpartition("@")  # the last `@`: a password may hold one
    user = userinfo.partition(":")[0]
    host = re.split(r"[?#]", rest, maxsplit=1)[0]
    return redact_secrets(f"{scheme}://{user}@{host}" if at and user else f"{scheme}://{host}", _secrets(url))


def _secrets(url: str) -> list[str]:
    """What of `url` is secret wherever a message shows it: its password (the whole string when none is found in it,
    unless it is a plain URL without credentials)."""
    password = url_password(url)
    if password is not None:
        return [password]
    try:
        given = conninfo_to_dict(url).get("password")
    except (psycopg.Error, ValueError):
        return [url]
    return [str(given)] if given else []


def _unavailable(url: str, exc: BaseException, doing: str = "cannot connect") -> TeamUnavailable:
    return TeamUnavailable(f"{public(url)}: {doing} ({redact_secrets(str(exc).strip(), _secrets(url))}); "
                           "nothing was sent")


def connect(url: str, *, purpose: Purpose = "run") -> psycopg.Connection[tuple[object, ...]]:
    """An autocommit connection, with the schema checked for `purpose` (see `Purpose`).

    Raises:
        TeamUnavailable: the server cannot be reached or refuses us.
        DataError: the schema is missing, too old, not found on the `search_path`, not tripbench's, or this user
            lacks a privilege the purpose needs (each named, with the fix).
    """
    try:
        connection = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except (psycopg.Error, ValueError) as exc:
        raise _unavailable(url, exc) from None
    try:
        if purpose == "init":
            migrate(connection, public(url))
        else:
            ready(connection, public(url), writes=purpose == "run", may_create=purpose == "run")
    except psycopg.Error as exc:
        connection.close()
        raise _unavailable(url, exc, "cannot read the team schema") from None
    except BaseException:
        connection.close()
        raise
    return connection


async def connect_async(url: str) -> psycopg.AsyncConnection[tuple[object, ...]]:
    """`connect` for the event loop (the schema is already checked: `connect` ran first)."""
    try:
        return await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10)
    except (psycopg.Error, ValueError) as exc:
        raise _unavailable(url, exc) from None


def _v1(cursor: psycopg.Cursor[tuple[object, ...]]) -> None:
    cursor.execute(SCHEMA_V1)


def _v2(cursor: psycopg.Cursor[tuple[object, ...]]) -> None:
    cursor.execute(SCHEMA_V2)


MIGRATIONS: list[Callable[[psycopg.Cursor[tuple[object, ...]]], None]] = [_v1, _v2]
"""Schema changes in order; `tb_meta.schema` holds how many ran. A change is a new function, never an edit."""

SCHEMA_VERSION = len(MIGRATIONS)


def _meta(cursor: psycopg.Cursor[tuple[object, ...]], where: str) -> int | None:
    """The schema version `tb_meta` records (a plain SELECT), None when no `tb_meta` is on the `search_path`.

    Raises:
        DataError: another cache key scheme, a newer schema, a version that is no number, tables found only outside
            the `search_path`, or no privilege to read them.
    """
    cursor.execute("SELECT to_regclass('tb_meta') IS NULL")  # no error (which would end a transaction) when missing
    if (missing := cursor.fetchone()) is not None and missing[0]:
        cursor.execute("SELECT n.nspname, current_setting('search_path'), n.nspname = ANY(current_schemas(false)) "
                       "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'tb_meta' "
                       "ORDER BY 3 DESC, 1 LIMIT 1")
        if (elsewhere := cursor.fetchone()) is not None:
            if elsewhere[2]:  # made on the search_path since the first look (another process's first session)
                return _meta(cursor, where)
            raise DataError(f"{where}: the team tables are in schema {elsewhere[0]}, which the search_path "
                            f"({elsewhere[1]}) leaves out: add it (ALTER ROLE ... SET search_path = {elsewhere[0]}, or "
                            f"options=-csearch_path%3D{elsewhere[0]} in the URL's query)")
        return None
    try:
        cursor.execute("SELECT name, value FROM tb_meta WHERE name IN ('key_scheme', 'schema')")
    except pg_errors.InsufficientPrivilege:
        raise DataError(f"{where}: this user may not read the team tables (tb_meta): the database's owner grants "
                        "them (see the README's least-privilege GRANTs)") from None
    meta = {str(name): str(value) for name, value in cursor.fetchall()}
    if "key_scheme" not in meta or "schema" not in meta:
        raise DataError(f"{where}: tb_meta holds no tripbench schema (key_scheme and schema rows): {INIT_HINT}, or "
                        "point [team] url_env at another database")
    if meta["key_scheme"] != KEY_SCHEME:
        raise DataError(f"{where}: the team database's cache was written with key scheme {meta['key_scheme']!r}, "
                        f"this tripbench uses {KEY_SCHEME}; point [team] url_env at another database")
    if not meta["schema"].isdigit():
        raise DataError(f"{where}: tb_meta records schema {meta['schema']!r}, not a number: the table was changed by "
                        f"hand; the database's owner sets it back (the tripbench that made it wrote "
                        f"{SCHEMA_VERSION}) or points [team] url_env at another database")
    version = int(meta["schema"])
    if version > SCHEMA_VERSION:
        raise DataError(f"{where}: the team database has schema {version}, newer than this tripbench knows "
                        f"({SCHEMA_VERSION}): upgrade tripbench")
    return version


def ready(connection: psycopg.Connection[tuple[object, ...]], where: str, *, writes: bool = True,
          may_create: bool = False) -> int:
    """Checks, with plain SELECTs, that the schema is current and this user may use it; returns its version. A
    missing or older schema is created or migrated only when `may_create` and this user may do it (the owner).

    Args:
        where: The database as messages name it (`public(url)`).
        writes: Whether this user must write (a run) or only read (`team status`).

    Raises:
        DataError: the schema is missing or too old (and is not to be made here), or a privilege is missing.
    """
    with connection.cursor() as cursor:
        version = _meta(cursor, where)
        if version is None or version < SCHEMA_VERSION:
            if may_create and _may_migrate(cursor):
                return migrate(connection, where)
            raise DataError(f"{where}: " + ("the team schema is not set up here" if version is None else
                                            f"the team schema is {version}, this tripbench needs {SCHEMA_VERSION}")
                            + f": {INIT_HINT}")
        table = ["SELECT", "INSERT", "UPDATE", "DELETE"] if writes else ["SELECT"]
        cursor.execute(MISSING_PRIVILEGES, {"table": table, "writes": writes})
        missing = [str(what) for what, in cursor.fetchall()]
    if missing:
        raise DataError(f"{where}: this user lacks {', '.join(missing)}: the database's owner grants them (see the "
                        "README's least-privilege GRANTs)")
    return version


def _may_migrate(cursor: psycopg.Cursor[tuple[object, ...]]) -> bool:
    """Whether this user may create tables here and owns what a migration changes (tb_meta, when it exists)."""
    cursor.execute("SELECT current_schema() IS NOT NULL AND has_schema_privilege(current_schema(), 'CREATE') AND "
                   "coalesce(pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass('tb_meta')), "
                   "'USAGE'), true)")
    row = cursor.fetchone()
    return row is not None and bool(row[0])


MISSING_PRIVILEGES = """
WITH tb AS (SELECT relnamespace FROM pg_class WHERE oid = 'tb_meta'::regclass)
SELECT p.privilege || ' on ' || c.relname FROM pg_class c JOIN tb USING (relnamespace),
    unnest(CASE WHEN c.relkind = 'S' THEN ARRAY['USAGE'] WHEN c.relname = 'tb_meta' THEN ARRAY['SELECT']
                ELSE %(table)s::text[] END) AS p (privilege)
    WHERE c.relname LIKE 'tb\\_%%' AND c.relkind IN ('r', 'p', 'S') AND (%(writes)s OR c.relkind <> 'S')
        AND NOT CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(c.oid, p.privilege)
                     ELSE has_table_privilege(c.oid, p.privilege) END
UNION ALL
SELECT 'EXECUTE on ' || f.proname || '()' FROM pg_proc f JOIN tb ON f.pronamespace = tb.relnamespace
    WHERE %(writes)s AND f.proname LIKE 'tb\\_%%' AND NOT has_function_privilege(f.oid, 'EXECUTE')
ORDER BY 1
"""
"""What this user lacks of what it needs: SELECT on every `tb_` table; to write, also INSERT, UPDATE and DELETE (but
on tb_meta, which only `team init` changes), USAGE on the sequences and EXECUTE on the `tb_` functions."""


def migrate(connection: psycopg.Connection[tuple[object, ...]], where: str = "the team database") -> int:
    """Creates or migrates the schema (idempotent; one process at a time; no DDL when it is current); returns the
    schema version.

    Raises:
        DataError: another cache key scheme, a schema newer than this tripbench knows, a version that is no number,
            or this user may not create or change the schema (not the owner).
    """
    try:
        with connection.transaction(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = _meta(cursor, where)
            if version == SCHEMA_VERSION:
                return version
            if version is None:
                cursor.execute("CREATE TABLE tb_meta (name text PRIMARY KEY, value text NOT NULL)")
                cursor.execute("INSERT INTO tb_meta VALUES ('key_scheme', %s), ('schema', '0')", (KEY_SCHEME,))
            for step in MIGRATIONS[version or 0:]:
                step(cursor)
            cursor.execute("UPDATE tb_meta SET value = %s WHERE name = 'schema'", (str(SCHEMA_VERSION),))
    except pg_errors.InsufficientPrivilege:
        raise DataError(f"{where}: this user may not create or change the team schema: {INIT_HINT}") from None
    except pg_errors.InvalidSchemaName:
        raise DataError(f"{where}: the search_path names no schema that exists, so there is nowhere to create the "
                        "team tables: set the role's search_path (ALTER ROLE ... SET search_path = public)") from None
    return SCHEMA_VERSION


SCHEMA_V1 = """
CREATE TABLE tb_cache (
    key text PRIMARY KEY,
    entry bytea NOT NULL,                 -- orjson of cache.CacheEntry.stored(), zlib; verified on read
    cost_usd double precision,            -- what the call cost: a dead worker's charge is settled at it
    created timestamptz NOT NULL DEFAULT now()
);

-- The spend cap: one row per budget. reserved = the open charges' worst cases; spent = the settled charges' costs
-- plus the worst cases of charges whose call may have been billed with no answer seen (orphaned).
CREATE TABLE tb_budget (
    name text PRIMARY KEY,
    spent numeric NOT NULL DEFAULT 0 CHECK (spent >= 0),
    reserved numeric NOT NULL DEFAULT 0 CHECK (reserved >= 0)
);

CREATE TABLE tb_worker (
    id bigserial PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    started timestamptz NOT NULL DEFAULT now(),
    heartbeat timestamptz NOT NULL DEFAULT now(),   -- the database's clock, never a worker's
    alive boolean NOT NULL DEFAULT true
);

CREATE TABLE tb_charge (
    id bigserial PRIMARY KEY,
    budget text NOT NULL REFERENCES tb_budget (name),
    worker bigint NOT NULL REFERENCES tb_worker (id),
    model text NOT NULL,
    cache_key text,
    reserved numeric NOT NULL CHECK (reserved >= 0),
    cost numeric CHECK (cost >= 0),
    state text NOT NULL CHECK (state IN ('open', 'orphaned', 'settled')),
    opened timestamptz NOT NULL DEFAULT now(),
    settled timestamptz,
    CHECK ((state = 'settled') = (cost IS NOT NULL))
);
CREATE INDEX tb_charge_open ON tb_charge (worker) WHERE state = 'open';
CREATE INDEX tb_charge_orphaned ON tb_charge (cache_key) WHERE state = 'orphaned';

-- Reserve: the conditional update of the budget row decides; returns the charge's id, 0 when it does not fit while
-- other charges are open (they may free enough: wait), -1 when it does not fit with nothing open (the cap is reached).
CREATE FUNCTION tb_reserve(p_budget text, p_worker bigint, p_amount numeric, p_cap numeric, p_model text,
                           p_key text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    charge bigint;
BEGIN
    PERFORM 1 FROM tb_worker WHERE id = p_worker AND alive;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'tripbench worker % was declared dead (no heartbeat): it may open no charge', p_worker
            USING ERRCODE = 'TB001';
    END IF;
    INSERT INTO tb_budget (name) VALUES (p_budget) ON CONFLICT DO NOTHING;
    UPDATE tb_budget SET reserved = reserved + p_amount
        WHERE name = p_budget AND (p_cap IS NULL OR spent + reserved + p_amount <= p_cap);
    IF NOT FOUND THEN
        RETURN CASE WHEN (SELECT reserved FROM tb_budget WHERE name = p_budget) > 0 THEN 0 ELSE -1 END;
    END IF;
    INSERT INTO tb_charge (budget, worker, model, cache_key, reserved, state)
        VALUES (p_budget, p_worker, p_model, p_key, p_amount, 'open') RETURNING id INTO charge;
    RETURN charge;
END $$;

-- Settle charges at their real cost (an orphaned one was counted at its worst case: the difference comes back).
CREATE FUNCTION tb_settle(p_ids bigint[], p_costs numeric[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    WITH given AS (SELECT * FROM unnest(p_ids, p_costs) AS g (id, cost)),
    locked AS (SELECT c.id, c.budget, c.reserved, c.state, given.cost FROM tb_charge c JOIN given USING (id)
               WHERE c.state <> 'settled' ORDER BY c.id FOR UPDATE OF c),
    done AS (UPDATE tb_charge c SET cost = locked.cost, state = 'settled', settled = now()
             FROM locked WHERE c.id = locked.id RETURNING c.id),
    sums AS (SELECT budget, sum(reserved) FILTER (WHERE state = 'open') AS released,
                    sum(cost) - coalesce(sum(reserved) FILTER (WHERE state = 'orphaned'), 0) AS added
             FROM locked GROUP BY budget)
    UPDATE tb_budget b SET reserved = b.reserved - coalesce(sums.released, 0), spent = b.spent + sums.added
        FROM sums WHERE b.name = sums.budget;
END $$;

-- Charges whose call may have been billed with no answer seen (a timeout, a dropped connection, a dead worker):
-- counted as spent at their worst case until an answer under their cache key is found.
CREATE FUNCTION tb_orphan(p_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    WITH locked AS (SELECT id, budget, reserved FROM tb_charge WHERE id = ANY (p_ids) AND state = 'open'
                    ORDER BY id FOR UPDATE),
    done AS (UPDATE tb_charge c SET state = 'orphaned' FROM locked WHERE c.id = locked.id RETURNING c.id),
    sums AS (SELECT budget, sum(reserved) AS amount FROM locked GROUP BY budget)
    UPDATE tb_budget b SET reserved = b.reserved - sums.amount, spent = b.spent + sums.amount
        FROM sums WHERE b.name = sums.budget;
END $$;

-- Workers silent for longer than p_stale are dead: their open charges are orphaned. Orphaned charges whose answer
-- reached the cache are settled at the cost it records. Returns how many workers were declared dead.
CREATE FUNCTION tb_reap(p_stale interval) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    dead bigint[];
    found_ids bigint[];
    found_costs numeric[];
BEGIN
    WITH gone AS (UPDATE tb_worker SET alive = false WHERE alive AND heartbeat < now() - p_stale RETURNING id)
    SELECT coalesce(array_agg(id), '{}') INTO dead FROM gone;
    IF cardinality(dead) > 0 THEN
        PERFORM tb_orphan(ARRAY(SELECT id FROM tb_charge WHERE worker = ANY (dead) AND state = 'open'));
    END IF;
    SELECT coalesce(array_agg(c.id), '{}'), coalesce(array_agg(coalesce(e.cost_usd, 0)::numeric), '{}')
        INTO found_ids, found_costs
        FROM tb_charge c JOIN tb_cache e ON e.key = c.cache_key WHERE c.state = 'orphaned';
    IF cardinality(found_ids) > 0 THEN
        PERFORM tb_settle(found_ids, found_costs);
    END IF;
    RETURN cardinality(dead);
END $$;

-- Shared rate limits, GCRA: per limit key (a hash of provider, model, API key hash and endpoint; never the key) the
-- theoretical arrival time of requests and of tokens, in seconds of the database's clock. A take of n units at rate
-- 1/T with a burst of tau seconds is admitted when max(tat, now) + min(n, C) T - tau <= now (C = tau / T units, so a
-- take larger than the burst waits for a full bucket and leaves it in debt); returns 0 once taken, else how long to
-- wait. Both buckets are taken together or not at all.
CREATE TABLE tb_rate (
    key text PRIMARY KEY,
    display text NOT NULL,                -- provider/model@host: what `tripbench team status` shows
    requests_tat double precision NOT NULL DEFAULT 0,
    tokens_tat double precision NOT NULL DEFAULT 0,
    paused_until double precision NOT NULL DEFAULT 0
);

CREATE FUNCTION tb_take(p_key text, p_display text, p_req_t double precision, p_req_tau double precision,
                        p_tok_t double precision, p_tok_tau double precision, p_tokens double precision)
    RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    now_s double precision := extract(epoch FROM clock_timestamp());
    r tb_rate%ROWTYPE;
    req_base double precision;
    tok_base double precision;
    wait double precision := 0;
BEGIN
    INSERT INTO tb_rate (key, display) VALUES (p_key, p_display) ON CONFLICT DO NOTHING;
    SELECT * INTO r FROM tb_rate WHERE key = p_key FOR UPDATE;
    IF now_s < r.paused_until THEN
        RETURN r.paused_until - now_s;
    END IF;
    req_base := greatest(r.requests_tat, now_s);
    tok_base := greatest(r.tokens_tat, now_s);
    IF p_req_t IS NOT NULL THEN
        wait := greatest(wait, req_base + least(1.0, p_req_tau / p_req_t) * p_req_t - p_req_tau - now_s);
    END IF;
    IF p_tok_t IS NOT NULL THEN
        wait := greatest(wait, tok_base + least(p_tokens, p_tok_tau / p_tok_t) * p_tok_t - p_tok_tau - now_s);
    END IF;
    IF wait > 1e-9 THEN
        RETURN wait;
    END IF;
    UPDATE tb_rate SET requests_tat = CASE WHEN p_req_t IS NULL THEN requests_tat ELSE req_base + p_req_t END,
                       tokens_tat = CASE WHEN p_tok_t IS NULL THEN tokens_tat ELSE tok_base + p_tokens * p_tok_t END
        WHERE key = p_key;
    RETURN 0;
END $$;

-- A 429: nothing is admitted for p_seconds, and the buckets are empty when the pause ends (traffic ramps up again).
CREATE FUNCTION tb_pause(p_key text, p_display text, p_seconds double precision, p_req_tau double precision,
                         p_tok_tau double precision) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    resume double precision := extract(epoch FROM clock_timestamp()) + p_seconds;
BEGIN
    INSERT INTO tb_rate (key, display) VALUES (p_key, p_display) ON CONFLICT DO NOTHING;
    UPDATE tb_rate SET paused_until = greatest(paused_until, resume),
                       requests_tat = greatest(requests_tat, resume + coalesce(p_req_tau, 0)),
                       tokens_tat = greatest(tokens_tat, resume + coalesce(p_tok_tau, 0))
        WHERE key = p_key;
END $$;
"""

SCHEMA_V2 = """
-- One cap per budget, recorded by the first run that books under it (cap_set); NULL with cap_set: no cap.
ALTER TABLE tb_budget ADD COLUMN cap numeric CHECK (cap >= 0), ADD COLUMN cap_set boolean NOT NULL DEFAULT false;

-- A reservation's id, chosen by its process: a reservation sent again after its answer was lost with the connection
-- (a restart) finds the charge it made instead of making a second one.
ALTER TABLE tb_charge ADD COLUMN request uuid UNIQUE;

-- Shard claims: each take of a claim's advisory lock counts one more epoch, so a holder that lost the lock with its
-- connection (a restart) knows, on taking it again, whether anyone held it meanwhile; a reservation names its claim's
-- epoch and is refused once another process took the claim (fencing).
CREATE TABLE tb_claim (
    key bigint PRIMARY KEY,
    epoch bigint NOT NULL,
    holder text NOT NULL,
    taken timestamptz NOT NULL DEFAULT now()
);

DROP FUNCTION tb_reserve(text, bigint, numeric, numeric, text, text);

-- Reserve under the budget's recorded cap: returns the charge's id; 0 when it does not fit while other charges are
-- open (they may free enough: wait); -1 when it cannot fit even if every open charge settles at nothing.
CREATE FUNCTION tb_reserve(p_budget text, p_worker bigint, p_amount numeric, p_model text, p_key text,
                           p_request uuid, p_claim bigint, p_epoch bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    charge bigint;
    b tb_budget%ROWTYPE;
BEGIN
    SELECT id INTO charge FROM tb_charge WHERE request = p_request;
    IF FOUND THEN
        RETURN charge;
    END IF;
    PERFORM 1 FROM tb_worker WHERE id = p_worker AND alive;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'tripbench worker % was declared dead (no heartbeat): it may open no charge', p_worker
            USING ERRCODE = 'TB001';
    END IF;
    IF p_claim IS NOT NULL THEN
        PERFORM 1 FROM tb_claim WHERE key = p_claim AND epoch = p_epoch;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'another process took this shard''s claim' USING ERRCODE = 'TB003';
        END IF;
    END IF;
    INSERT INTO tb_budget (name) VALUES (p_budget) ON CONFLICT DO NOTHING;
    SELECT * INTO b FROM tb_budget WHERE name = p_budget FOR UPDATE;
    IF b.cap IS NOT NULL AND b.spent + b.reserved + p_amount > b.cap THEN
        RETURN CASE WHEN b.spent + p_amount > b.cap THEN -1 ELSE 0 END;
    END IF;
    UPDATE tb_budget SET reserved = reserved + p_amount WHERE name = p_budget;
    INSERT INTO tb_charge (budget, worker, model, cache_key, reserved, state, request)
        VALUES (p_budget, p_worker, p_model, p_key, p_amount, 'open', p_request) RETURNING id INTO charge;
    RETURN charge;
END $$;
"""
