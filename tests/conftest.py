"""Shared fixtures. Hypothesis is derandomized everywhere: tests see fixed examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("minegen", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("minegen")

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
REPO = Path(__file__).resolve().parent.parent
_REPO_OUTPUTS = ("reports", "tables")  # a test writes inside its own tmp_path, never here


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(REPO)) for d in _REPO_OUTPUTS for p in (REPO / d).rglob("*")}


def pytest_sessionstart(session) -> None:
    session.config._repo_tree = _tree(REPO)


def pytest_sessionfinish(session, exitstatus) -> None:
    """A test that wrote into the repository's reports/ or tables/ fails the session."""
    new = sorted(_tree(REPO) - getattr(session.config, "_repo_tree", set()))
    if new:
        print(f"\nthe tests wrote into the repository: {new[:5]}"
              + (f" and {len(new) - 5} more" if len(new) > 5 else ""))
        session.exitstatus = 1


@pytest.fixture(scope="session")
def default_tables():
    from minegen.table_loader import load_tables

    return load_tables()


@pytest.fixture(scope="session")
def fixture_tables():
    """fixture_tables("name") -> Tables of tests/fixtures/tables/name."""
    from minegen.table_loader import load_tables

    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load_tables(FIXTURES / name)
        return cache[name]

    return get
