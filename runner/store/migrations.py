"""Numbered schema migrations of `results.sqlite` (llm's `migrations.py` pattern).

Each migration is a function `mNNN_what(conn)` appended by `@migration`, applied once and recorded in
`_migrations`; a schema change is a new function, never an edit, so a run directory written by an older tripbench
resumes after an upgrade. `runner/store/writer.py` documents the resulting schema.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Applies the migrations `conn` has not seen yet, each in its own transaction; returns their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for step in MIGRATIONS:
        if step.__name__ in done:
            continue
        with conn:  # one transaction: a crash mid-migration leaves the previous schema intact
            step(conn)
            conn.execute("INSERT INTO _migrations VALUES (?, ?)", (step.__name__, time.time()))
        applied.append(step.__name__)
    return applied


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    conn.execute("""
        CREATE TABLE session (
            id INTEGER PRIMARY KEY,
            spec TEXT NOT NULL,
            spec_path TEXT,
            tool_version TEXT NOT NULL,
            pid INTEGER NOT NULL,
            planned TEXT NOT NULL,
            started_at REAL NOT NULL,
            ended_at REAL,
            outcome TEXT,
            spent_usd REAL NOT NULL DEFAULT 0
        )""")
    conn.execute("""
        CREATE TABLE task (
            benchmark TEXT NOT NULL,
            split TEXT NOT NULL,
            id TEXT NOT NULL,
            position INTEGER NOT NULL,
            input TEXT NOT NULL,
            PRIMARY KEY (benchmark, split, id)
        )""")
    conn.execute("""
        CREATE TABLE rollout (
            id INTEGER PRIMARY KEY,
            benchmark TEXT NOT NULL,
            split TEXT NOT NULL,
            task TEXT NOT NULL,
            model TEXT NOT NULL,
            strategy TEXT NOT NULL,
            sample INTEGER NOT NULL,
            status TEXT NOT NULL,
            error_type TEXT,
            error TEXT,
            answer TEXT,
            plan TEXT,
            n_steps INTEGER NOT NULL,
            calls INTEGER NOT NULL,
            cache_hits INTEGER NOT NULL,
            retries INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            cached_input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            saved_usd REAL NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL NOT NULL,
            session INTEGER NOT NULL REFERENCES session(id),
            UNIQUE (benchmark, split, task, model, strategy, sample)
        )""")
    conn.execute("CREATE INDEX rollout_by_model_strategy ON rollout (model, strategy, status)")
    conn.execute("""
        CREATE TABLE step (
            rollout_id INTEGER NOT NULL REFERENCES rollout(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (rollout_id, idx)
        ) WITHOUT ROWID""")
    conn.execute("""
        CREATE TABLE llm_call (
            rollout_id INTEGER NOT NULL REFERENCES rollout(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            model TEXT NOT NULL,
            cache_key TEXT,
            hit INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            cached_input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cost_usd REAL,
            saved_usd REAL,
            latency_s REAL NOT NULL,
            retries INTEGER NOT NULL,
            error_type TEXT,
            error TEXT,
            PRIMARY KEY (rollout_id, idx)
        ) WITHOUT ROWID""")
    conn.execute("""
        CREATE TABLE evaluation (
            rollout_id INTEGER NOT NULL REFERENCES rollout(id) ON DELETE CASCADE,
            mode TEXT NOT NULL,
            details TEXT NOT NULL,
            PRIMARY KEY (rollout_id, mode)
        ) WITHOUT ROWID""")
    conn.execute("""
        CREATE TABLE verdict (
            rollout_id INTEGER NOT NULL REFERENCES rollout(id) ON DELETE CASCADE,
            mode TEXT NOT NULL,
            idx INTEGER NOT NULL,
            grp TEXT NOT NULL,
            name TEXT NOT NULL,
            passed INTEGER,
            message TEXT,
            PRIMARY KEY (rollout_id, mode, idx)
        ) WITHOUT ROWID""")


@migration
def m002_charge(conn: sqlite3.Connection) -> None:
    conn.execute("""
        CREATE TABLE charge (
            id INTEGER PRIMARY KEY,
            session INTEGER NOT NULL REFERENCES session(id),
            model TEXT NOT NULL,
            cache_key TEXT,
            reserved_usd REAL NOT NULL,
            cost_usd REAL,
            opened_at REAL NOT NULL,
            settled_at REAL
        )""")
    conn.execute("CREATE INDEX charge_open ON charge (id) WHERE cost_usd IS NULL")


@migration
def m003_batches(conn: sqlite3.Connection) -> None:
    """Batches sent through a provider's batch API: written before submission, so a resumed run finds them."""
    conn.execute("""
        CREATE TABLE batch (
            id INTEGER PRIMARY KEY,
            session INTEGER NOT NULL REFERENCES session(id),
            model TEXT NOT NULL,
            tag TEXT NOT NULL UNIQUE,
            provider_id TEXT,
            state TEXT NOT NULL,
            requests INTEGER NOT NULL,
            created_at REAL NOT NULL,
            submitted_at REAL,
            ended_at REAL
        )""")
    conn.execute("""
        CREATE TABLE batch_request (
            batch INTEGER NOT NULL REFERENCES batch(id),
            custom_id TEXT NOT NULL,
            cache_key TEXT NOT NULL,
            charge INTEGER REFERENCES charge(id),
            PRIMARY KEY (batch, custom_id)
        ) WITHOUT ROWID""")
    conn.execute("CREATE INDEX batch_live ON batch (id) WHERE state IN ('preparing', 'submitted')")
    conn.execute("ALTER TABLE llm_call ADD COLUMN batch_saved_usd REAL")
    conn.execute("ALTER TABLE llm_call ADD COLUMN batched INTEGER NOT NULL DEFAULT 0")


@migration
def m004_untrusted_usage(conn: sqlite3.Connection) -> None:
    """What was wrong with a call's reported usage; and a ledger older versions let go below zero repaired: a charge
    settled at a negative cost (a provider's negative usage, believed) counts at its worst case, as it is now."""
    conn.execute("ALTER TABLE llm_call ADD COLUMN usage_problem TEXT")
    conn.execute("UPDATE session SET spent_usd = spent_usd + coalesce((SELECT sum(c.reserved_usd - c.cost_usd) "
                 "FROM charge c WHERE c.session = session.id AND c.cost_usd < 0), 0)")
    conn.execute("UPDATE charge SET cost_usd = reserved_usd WHERE cost_usd < 0")
    conn.execute("UPDATE session SET spent_usd = 0 WHERE spent_usd < 0")
