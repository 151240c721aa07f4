"""TravelEval's sandbox: the database folder imported into one SQLite index (`build`), read through `Sandbox`."""
