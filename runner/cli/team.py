"""`tripbench team`: the team database a spec's `[team]` names (PostgreSQL), set up and looked at."""

from __future__ import annotations

import importlib.util
import json

import click

from errors import UserError
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
