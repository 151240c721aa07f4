"""`tripbench prices`: the price table in use, and its refresh from LiteLLM's maintained list."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click

from datahome import default_home, download, home_option, price_table_path
from errors import DataError, UserError
from providers.prices import (
    LITELLM_URL,
    PriceTable,
    from_litellm,
    load_price_table,
    write_table,
)

MAX_PRICE_LIST_BYTES = 64 << 20
"""The most the downloaded price list may hold (LiteLLM's is about 1 MB): it is read whole."""


@click.group("prices")
def prices_command() -> None:
    """Show the price table, or refresh it from LiteLLM's maintained list."""


@prices_command.command("show")
@click.argument("pattern", required=False, default="")
def show_command(pattern: str) -> None:
    """Prices of the models whose string contains PATTERN (all without one), USD per million tokens.

    Exits 1 when no model matches (naming the closest one the table has, if any).
    """
    table = load_price_table()
    matching = {model: price for model, price in table.models.items() if pattern in model}
    if not matching:
        near = table.nearest(pattern)
        raise UserError(f"no model in the price table ({len(table.models)} models, from {table.source}) contains "
                        f"{pattern!r}" + (f"; did you mean {near}?" if near else ""))
    click.echo(f"{len(matching)} of {len(table.models)} models, from {table.source}")
    click.echo("model: input / cached input / output; batch input / batch output")
    for model, price in matching.items():
        online, batch = price.rates(), price.rates(batch=True)
        retired = f"; shut down on {price.deprecation_date}" if price.deprecation_date else ""
        click.echo(f"  {model}: {online[0]:g} / {online[1]:g} / {online[2]:g}; {batch[0]:g} / {batch[2]:g}{retired}")


OFFLINE = ("the table in use stays; offline? `tripbench prices update --url file:///PATH/TO/"
           "model_prices_and_context_window.json` reads a saved copy of LiteLLM's list")
"""What a failed download suggests (`--url` takes any URL urllib opens, a file:// one included)."""


@prices_command.command("update")
@click.option("--url", default=LITELLM_URL, show_default=True, help="Where LiteLLM's price list is.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds the download may take.")
@home_option
def update_command(url: str, timeout: float, home: Path | None) -> None:
    """Download LiteLLM's price list and use it from now on (written to the data home as prices.json).

    The list is checked before it replaces anything: a failed or damaged download keeps the table in use.
    Prices in a run spec still win over it, and a model it does not price stays unknown, never $0.
    """
    home = home or default_home()
    table: PriceTable | None = None

    def convert(path: Path, source: str) -> None:  # download's check is the conversion: the file is read once
        nonlocal table
        table = _read_litellm(path, source)

    with tempfile.TemporaryDirectory() as folder:
        download(url, Path(folder) / "litellm.json", timeout, convert, "the price list", offline=OFFLINE,
                 max_bytes=MAX_PRICE_LIST_BYTES)
    assert table is not None  # download returns only once its check passed
    home.mkdir(parents=True, exist_ok=True)
    write_table(table, price_table_path(home))
    click.echo(f"{len(table.models)} models priced, from {url}; written to {price_table_path(home)}")


def _read_litellm(path: Path, url: str) -> PriceTable:
    """The downloaded file as our table; a DataError naming the URL when it is not LiteLLM's price list."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{url}: not JSON ({exc})") from None
    return from_litellm(data if isinstance(data, dict) else {}, url)
