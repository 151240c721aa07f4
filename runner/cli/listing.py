"""`tripbench list`: the benchmarks, their splits and strategies (what each does), and the models with a price."""

from __future__ import annotations

import textwrap

import click

from benchmarks.offline import MODELS as KEYLESS
from benchmarks.registry import available, get_benchmark
from errors import UserError
from providers.prices import load_price_table


@click.command("list")
def list_command() -> None:
    """List benchmarks, their splits and strategies (what each does), and the models the bundled price table knows."""
    for name in available():
        try:  # an installed plugin that is broken is listed as such, not in the way of the others
            benchmark = get_benchmark(name)
        except UserError as exc:
            click.echo(f"benchmark {name}: cannot be loaded: {exc}")
            continue
        strategies = benchmark.strategies(benchmark.options_model())
        known = (("splits", benchmark.splits), ("evaluator modes", benchmark.modes))
        facts = [f"{what}: {', '.join(values)}" for what, values in known if values]
        click.echo(f"benchmark {name}")
        for fact in facts:
            click.echo(f"  {fact}")
        click.echo("  strategies:")
        width = max(len(strategy.name) for strategy in strategies)
        for strategy in strategies:
            click.echo(f"    {strategy.name:<{width}}  {getattr(strategy, 'description', '(no description)')}")
    click.echo("models that need no key (free; `tripbench mock-server --reply` serves them):")
    width = max(map(len, KEYLESS))
    for model, does in KEYLESS.items():  # wrapped under itself, within 80 columns
        click.echo(textwrap.fill(does, 80, initial_indent=f"  {model:<{width}}  ",
                                 subsequent_indent=" " * (width + 4), break_on_hyphens=False))
    table = load_price_table()
    providers = len({model.partition(":")[0] for model in table.models})
    click.echo(f"priced models: {len(table.models):,} of {providers} providers (`tripbench prices show TEXT`)")
    click.echo('openai-compatible servers: `prices = "PROVIDER:NAME"` (a table entry) or')
    click.echo("  `prices = { input = ..., output = ... }` in their [[models]] entry")
