"""The run store: a run directory's results store (writer, migrations, readers), its outputs and summary."""
