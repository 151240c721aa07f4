"""The map is inside the repository: every repository path cited in code, tests, docs and CI exists, every section a
citation names (`docs/fidelity/travelplanner.md §4.5`) is a heading of that page, and every test module named by its
dotted name (`python -m tests.runner.team.cap_worker`, a spec's `tests.runner.toy_benchmark:ToyBenchmark`) is there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("benchmarks", "cache", "datahome", "docs", "errors", "perf", "providers", "reports", "runner",
         "sandbox_index", "tests")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(ROOTS) + r")/[\w./-]*[\w/])(?:\s+§(\d+(?:\.\d+)?))?")
"""A path under one of our top-level folders, and the section cited after it, if any."""
PLACEHOLDER = re.compile(r"/[A-Z_]+(?:\.\w+)?$|\*")
"""`perf/NAME.py`, `tests/*`: a pattern, not a path."""
TEST_MODULE = re.compile(r"(?<![\w./-])tests(?:\.\w+)+")
"""A module of the `tests` package by its dotted name (an attribute follows a colon: `module:Class`)."""


def _files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split()
    return [REPO / name for name in listed
            if (name.endswith((".py", ".md", ".toml")) or name.startswith(".ci/")) and (REPO / name).is_file()]


def _sections(page: Path) -> set[str]:
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", page.read_text(encoding="utf-8"), flags=re.M))


def _lines() -> list[tuple[str, str]]:
    """(where, text) for every line of every file the citations are looked for in."""
    return [(f"{path.relative_to(REPO)}:{number}", line) for path in _files()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)]


def citations() -> list[tuple[str, str, str | None]]:
    """(where, cited path, cited section) for every citation of a repository path."""
    return [(where, match.group(1).rstrip("."), match.group(2)) for where, line in _lines()
            for match in PATH.finditer(line) if not PLACEHOLDER.search(match.group(1))]


def test_every_cited_repository_path_exists() -> None:
    missing = [f"{where}: {cited}" for where, cited, _ in citations() if not (REPO / cited).exists()]
    assert missing == []


def test_every_cited_section_is_a_heading_of_its_page() -> None:
    missing = [f"{where}: {cited} §{section}" for where, cited, section in citations()
               if section and cited.endswith(".md") and (REPO / cited).is_file()
               and section not in _sections(REPO / cited)]
    assert missing == []


def test_nothing_cites_a_file_outside_the_repository() -> None:
    outside = re.compile(r"\bspec §\d|DESIGN\.md|\.\./shared/specs")
    found = [f"{path.relative_to(REPO)}:{number}" for path in _files() if path != Path(__file__)
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if outside.search(line)]
    assert found == []


def _is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_test_module_named_by_its_dotted_name_exists() -> None:
    """Tests moved with their folders: a subprocess's `-m tests.…`, a spec's benchmark and a docstring follow."""
    missing = [f"{where}: {name}" for where, line in _lines() for name in TEST_MODULE.findall(line)
               if not _is_module(name)]
    assert missing == []
