"""`tripbench team`: the team database a spec's `[team]` names (PostgreSQL), set up and looked at."""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path

import click

from errors import UsageError, UserError
from runner.engine.spec import TEAM_URL_ENV

url_env_option = click.option("--url-env", default=TEAM_URL_ENV, show_default=True, metavar="NAME",
                              help="The environment variable holding the database's URL (as `[team] url_env`).")


def _require_client() -> None:
    if importlib.util.find_spec("psycopg") is None:
        raise UserError("the team database needs PostgreSQL's client: pip install 'tripbench[team]'")


@click.group("team")
def team_command() -> None:
    """Set up and inspect the team database: one cache, spend cap and rate limits for many processes."""


@team_command.command("init")
@url_env_option
def init_command(url_env: str) -> None:
    """Create or migrate the team database's schema, as its owner (a run and `team status` need only DML rights)."""
    _require_client()
    from runner.team import SCHEMA_VERSION, connect, public, team_url

    url = team_url(url_env, "--url-env")
    connect(url, purpose="init").close()
    click.echo(f"{public(url)}: team schema {SCHEMA_VERSION} ready")


@team_command.command("status")
@url_env_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")
def status_command(url_env: str, as_json: bool) -> None:
    """Budgets (spent, reserved, charges), live workers, cache entries and rate-limit keys of the team database."""
    _require_client()
    from runner.team import connect, public, team_url

    url = team_url(url_env, "--url-env")
    with connect(url, purpose="read") as connection:  # plain SELECTs: a read-only user may look
        budgets = connection.execute(
            "SELECT b.name, b.cap::float8, b.spent::float8, b.reserved::float8, count(c.id), "
            "count(c.id) FILTER (WHERE c.state = 'orphaned') FROM tb_budget b LEFT JOIN tb_charge c "
            "ON c.budget = b.name GROUP BY b.name, b.cap ORDER BY b.name").fetchall()
        workers = connection.execute("SELECT host, pid, extract(epoch FROM now() - heartbeat)::float8 FROM tb_worker "
                                     "WHERE alive ORDER BY id").fetchall()
        row = connection.execute("SELECT count(*) FROM tb_cache").fetchone()
        limits = [str(name) for name, in connection.execute("SELECT display FROM tb_rate ORDER BY display")]
    if row is None:
        raise UserError(f"{public(url)}: the team schema cannot be read")
    status = {
        "database": public(url),
        "budgets": [{"name": name, "cap": cap, "spent_usd": spent, "reserved_usd": reserved, "charges": charges,
                     "at_worst_case": orphans} for name, cap, spent, reserved, charges, orphans in budgets],
        "workers": [{"host": host, "pid": pid, "heartbeat_s_ago": round(float(ago), 1)}  # type: ignore[arg-type]
                    for host, pid, ago in workers],
        "cache_entries": row[0],
        "rate_limits": limits,
    }
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    click.echo(f"{status['database']}: {status['cache_entries']} cache entries, {len(workers)} live workers")
    for budget in status["budgets"]:  # type: ignore[attr-defined]
        cap = "no cap" if budget["cap"] is None else f"cap ${budget['cap']:.4f}"
        click.echo(f"  budget {budget['name']} ({cap}): spent ${budget['spent_usd']:.4f} + "
                   f"${budget['reserved_usd']:.4f} reserved, {budget['charges']} charges "
                   f"({budget['at_worst_case']} at their worst case)")
    for worker in status["workers"]:  # type: ignore[attr-defined]
        click.echo(f"  worker {worker['host']}:{worker['pid']}, heartbeat {worker['heartbeat_s_ago']} s ago")
    for limit in limits:
        click.echo(f"  rate limits shared for {limit}")


@team_command.command("import-cache")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@url_env_option
def import_cache_command(directory: Path, url_env: str) -> None:
    """Share a local disk cache with the team: its calls are not paid again by team runs (which read only the team's
    cache). Each entry is verified first (a bad one is left out); an entry the team already holds stays as it is.

    Exits 1 when bad entries were left out.
    """
    _require_client()
    from cache.store import DB_FILE
    from runner.team import public, team_url
    from runner.team.imports import import_cache

    if not (directory / DB_FILE).is_file():
        raise UsageError(f"{directory}: not a tripbench cache (no {DB_FILE}); the local cache is <data home>/cache "
                         "unless a spec's cache_dir names another (`tripbench data info` shows the data home)")
    url = team_url(url_env, "--url-env")
    imported = import_cache(directory, url)
    click.echo(f"{public(url)}: {imported.new} entries of {directory} shared, {imported.held} the team already held "
               f"(kept as they were), {len(imported.bad)} bad left out")
    for bad in imported.bad[:10]:
        click.echo(f"  left out {bad.key}: {bad.reason} ({bad.detail})")
    if imported.bad:
        click.get_current_context().exit(1)


def local_cache_hint(cache_dir: Path) -> str | None:
    """For a team run (which reads only the team's cache): a line pointing to `team import-cache` when a local disk
    cache is there, whose calls the team would otherwise pay again; None when there is none."""
    from cache.store import DB_FILE

    if not (cache_dir / DB_FILE).is_file():
        return None
    return (f"note: a team run reads only the team's cache, not the local one at {cache_dir}; to use the calls it "
            f"holds instead of paying them again: tripbench team import-cache {shlex.quote(str(cache_dir))}")


@team_command.command("budget")
@click.argument("name")
@click.option("--cap", "cap_usd", type=click.FloatRange(min=0), metavar="USD",
              help="The budget's new cap, for every process booking under it (a run's max_cost must then match).")
@click.option("--no-cap", is_flag=True, help="Remove the budget's cap.")
@url_env_option
def budget_command(name: str, cap_usd: float | None, no_cap: bool, url_env: str) -> None:
    """Show a team budget, or change its cap (`--cap USD`, `--no-cap`) for every process booking under it."""
    _require_client()
    from runner.team import connect, public, team_url

    if cap_usd is not None and no_cap:
        raise click.UsageError("--cap and --no-cap exclude each other")
    if not name.isprintable():  # as a spec's [team] budget: no control character reaches the database
        raise click.BadParameter(f"{name!r}: a budget's name is printable text", param_hint="NAME")
    url = team_url(url_env, "--url-env")
    with connect(url) as connection:
        row = connection.execute("SELECT cap::float8, cap_set, spent::float8, reserved::float8 FROM tb_budget "
                                 "WHERE name = %s", (name,)).fetchone()
        if cap_usd is not None or no_cap:
            connection.execute("INSERT INTO tb_budget (name, cap, cap_set) VALUES (%s, %s::numeric, true) "
                               "ON CONFLICT (name) DO UPDATE SET cap = excluded.cap, cap_set = true",
                               (name, None if no_cap else repr(cap_usd)))
    before = "not used yet" if row is None or not row[1] else _cap(row[0])
    if cap_usd is None and not no_cap:
        spent = "" if row is None else f", spent ${row[2]:.4f} + ${row[3]:.4f} reserved"
        click.echo(f"{public(url)}: budget {name}: {before}{spent}")
        return
    click.echo(f"{public(url)}: budget {name}: {before} -> {_cap(None if no_cap else cap_usd)}; runs booking under "
               "it follow the new cap at once, and a run with another max_cost is refused")


def _cap(usd: object) -> str:
    return "no cap" if usd is None else f"${float(usd):g}"  # type: ignore[arg-type]
