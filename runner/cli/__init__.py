"""The `tripbench` command line: one module per command group."""
