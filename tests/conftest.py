"""Shared fixtures. Hypothesis is derandomized everywhere: tests see fixed examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("minegen", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("minegen")

FIXTURES = Path(__file__).parent / "fixtures" / "tables"


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
