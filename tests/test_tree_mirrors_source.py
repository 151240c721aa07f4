"""`tests/` mirrors the source tree: `tests/<package path>/` holds the tests of `<package path>/`, so a test is found
where its code is and a move of the code shows which tests go with it. A folder of tests without its package (the
code moved, the tests stayed), a test folder that is not a package, or a new module at `tests/` root that is not
cross-cutting fails here."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

ROOT_MODULES = {
    "__init__.py", "conftest.py",
    "local_server.py",  # llama.cpp's server for the local-model tests (used by tests/runner/cli/)
    "postgres_server.py",  # the throwaway PostgreSQL of the team tests, also started by perf/ scripts
    "staged_data.py",  # the skip-or-fail rule of every test that reads ../shared/data
    "test_demo_cli.py",  # `tripbench demo`: every benchmark, offline, through the real CLI
    "test_doc_citations.py",  # every repository path cited anywhere exists
    "test_import_cycles.py",  # no import circle between any two modules
    "test_layering.py",  # imports only go down the layers
    "test_perf_scripts.py",  # every perf/ script at its smoke size
    "test_readme.py",  # the README's commands and claims
    "test_tree_mirrors_source.py",  # this file
}
"""The modules at `tests/` root: they test no one package but the whole project (or serve every folder's tests)."""


def folders_of_tests(root: Path = TESTS) -> list[Path]:
    """Every folder under `root` holding Python files (caches aside), as paths relative to `root`."""
    return sorted({path.parent.relative_to(root) for path in root.rglob("*.py")
                   if "__pycache__" not in path.parts and path.parent != root})


def orphans(root: Path = TESTS, repo: Path = REPO) -> list[Path]:
    """Test folders whose package (`tests/PACKAGE` -> `PACKAGE/__init__.py`) is not in the source tree."""
    return [folder for folder in folders_of_tests(root) if not (repo / folder / "__init__.py").is_file()]


def test_every_test_folder_has_its_source_package() -> None:
    assert [f"tests/{folder}" for folder in orphans()] == []


def test_every_test_folder_is_a_package() -> None:
    """Tests import their helpers as modules of the `tests` package (`tests.runner.engine_support`), and two test
    modules of one name in two folders collide under pytest unless each folder is a package."""
    assert [f"tests/{folder}" for folder in folders_of_tests() if not (TESTS / folder / "__init__.py").is_file()] == []


def test_the_tests_root_holds_only_cross_cutting_modules() -> None:
    """A test of one package goes into that package's folder, not the root (and the list above stays true)."""
    assert sorted({path.name for path in TESTS.glob("*.py")} ^ ROOT_MODULES) == []


def test_a_folder_left_behind_by_its_package_is_found(tmp_path: Path) -> None:
    """The check fails where it should: tests of a `gateway` package kept after the package became `ladder` (as
    when `runner`'s rooms moved)."""
    for package in ("shop", "shop/ladder"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    for folder in ("shop/ladder", "shop/gateway"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
        (tmp_path / "tests" / folder / "test_retry.py").touch()
    assert orphans(tmp_path / "tests", tmp_path) == [Path("shop", "gateway")]
