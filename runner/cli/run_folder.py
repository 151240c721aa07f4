"""A run folder as the SPEC of `tripbench run`: every run keeps a copy of its spec in `RUN_DIR/spec.toml`, so
`tripbench run runs/nightly` resumes it.

A flag run's spec is written there from the start (`runner.cli.run`). A spec file's is copied there once a session
ran, under a first line naming the original (`COPIED_FROM`): resuming by folder runs the original while it is there,
since its relative paths (queries, cache_dir, [options] paths) are relative to its own folder, and the copy once it
is gone (a folder moved to another machine), which holds every setting of the run.
"""

from __future__ import annotations

import os
from pathlib import Path

from errors import UsageError
from providers.keys import redact

SPEC_FILE = "spec.toml"
COPIED_FROM = "# tripbench: a copy of "
"""The first line of a spec file's copy, followed by the original's absolute path."""


def spec_of_folder(folder: Path) -> Path:
    """The spec to run for a run folder given as SPEC: the original a copy names while it exists, else the copy.

    Raises:
        UsageError: the folder holds no `spec.toml` (not a run folder, or one of a tripbench that kept none).
    """
    copy = folder / SPEC_FILE
    if not copy.is_file():
        raise UsageError(f"{folder} is a folder without a {SPEC_FILE}: give the run's spec file (`tripbench run "
                         f"SPEC --run-dir {folder}`), or a run folder")
    with copy.open(encoding="utf-8") as file:
        first = file.readline().rstrip("\n")
    original = Path(first.removeprefix(COPIED_FROM)) if first.startswith(COPIED_FROM) else None
    return original if original is not None and original.is_file() else copy


def keep_spec(spec: Path, run_dir: Path) -> None:
    """Copies a spec file into `run_dir` (atomically; nothing when it is already the run's own `spec.toml`). A spec
    holding credentials (a model URL's password or key) is not copied: a secret is never written anywhere new, and
    resuming by folder then runs the original."""
    copy = run_dir / SPEC_FILE
    if copy.resolve() == spec.resolve() or not run_dir.is_dir():
        return
    original = spec.read_text(encoding="utf-8")
    if redact(original) != original:
        return
    text = f"{COPIED_FROM}{spec.resolve()}\n{original}"
    if copy.is_file() and copy.read_text(encoding="utf-8") == text:
        return
    partial = run_dir / f".{SPEC_FILE}.partial"
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, copy)
