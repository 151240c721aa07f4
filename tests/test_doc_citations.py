"""The map is inside the repository: every repository path cited in code, tests and docs exists, and every section a
citation names (`docs/fidelity/travelplanner.md §4.5`) is a heading of that page."""

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


def _files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split()
    return [REPO / name for name in listed if name.endswith((".py", ".md", ".toml")) and (REPO / name).is_file()]


def _sections(page: Path) -> set[str]:
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", page.read_text(encoding="utf-8"), flags=re.M))


def citations() -> list[tuple[str, str, str | None]]:
    """(where, cited path, cited section) for every citation of a repository path."""
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in PATH.finditer(line):
                if not PLACEHOLDER.search(match.group(1)):
                    found.append((f"{path.relative_to(REPO)}:{number}", match.group(1).rstrip("."), match.group(2)))
    return found


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
